//! Types of the foreign CRDs we render into, generated with kopium from the schemas their projects
//! publish (see `generate.sh`). Never edited by hand, nor reformatted — but for `pod_monitor` and
//! `prometheus_rule`, hand-written subsets of a far larger API.

#[rustfmt::skip]
pub mod http_route;
#[rustfmt::skip]
pub mod inference_pool;
#[rustfmt::skip]
pub mod inference_pool_v1alpha2;
#[rustfmt::skip]
pub mod lws;
pub mod pod_monitor;
pub mod prometheus_rule;
#[rustfmt::skip]
pub mod scaled_object;
