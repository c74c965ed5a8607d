//! Types of the foreign CRDs we render into, generated with kopium from the schemas their projects
//! publish (see `generate.sh`). Never edited by hand.

pub mod http_route;
pub mod inference_pool;
pub mod lws;
