//! Gateway API objects as the plugin reads them: the user's Gateway (for `doctor`) and the
//! `status.parents` that Gateways write on an HTTPRoute or InferencePool (for `doctor` and
//! `status`). Only the fields we read, every one optional, so an object written by any gateway
//! controller or API version still parses; pure functions over them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};

/// The Gateway API group (Gateway, HTTPRoute).
pub const GROUP: &str = "gateway.networking.k8s.io";
/// Annotation on the Gateway API CRDs naming the release they come from (e.g. `v1.6.3`).
pub const BUNDLE_VERSION: &str = "gateway.networking.k8s.io/bundle-version";
/// Annotation on the Gateway API CRDs naming their channel (`standard` or `experimental`).
pub const CHANNEL: &str = "gateway.networking.k8s.io/channel";

/// A status condition, as Gateway API objects carry them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
}

impl Condition {
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
}

impl std::fmt::Display for Condition {
    /// `Programmed=False (Invalid: listener http is invalid)`; reason and message when present.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={}", self.type_, self.status)?;
        match (self.reason.as_str(), self.message.as_str()) {
            ("", "") => Ok(()),
            (reason, "") => write!(f, " ({reason})"),
            ("", message) => write!(f, " ({message})"),
            (reason, message) => write!(f, " ({reason}: {message})"),
        }
    }
}

/// The condition of type `type_`, if reported.
pub fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// A Gateway (`gateway.networking.k8s.io/v1`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Gateway {
    pub spec: GatewaySpec,
    pub status: GatewayStatus,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct GatewaySpec {
    pub gateway_class_name: String,
    pub listeners: Vec<Listener>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct GatewayStatus {
    /// Where its controller made it reachable (an IP address or a hostname each).
    pub addresses: Vec<GatewayAddress>,
    pub conditions: Vec<Condition>,
}

/// One of `status.addresses`: `type` is `IPAddress` (the default), `Hostname` or a controller's own.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct GatewayAddress {
    #[serde(rename = "type")]
    pub type_: Option<String>,
    pub value: String,
}

/// One listener of a Gateway: a port and protocol, and which routes may attach to it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Listener {
    pub name: String,
    pub protocol: String,
    pub port: i32,
    /// The requests' hosts it accepts (any without; `*.example.com` for one label more).
    pub hostname: Option<String>,
    pub allowed_routes: AllowedRoutes,
}

/// The Gateway resource (`gateway.networking.k8s.io/v1`, plural `gateways`), to read one.
pub fn gateway_resource() -> kube::core::ApiResource {
    kube::core::ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk(GROUP, "v1", "Gateway"),
        "gateways",
    )
}

/// Where a client sends to reach routes through a Gateway: a base URL, and the `Host` its
/// requests carry when the route or listener matches hostnames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontDoor {
    pub url: String,
    pub host: Option<String>,
}

impl Gateway {
    /// The front door of this Gateway for a route with `hostnames` attached to its listener
    /// `section` (or, without one, its first HTTP listener, else its first HTTPS one): its first
    /// address (`status.addresses`, written by its controller once programmed) and the listener's
    /// port. The `Host` is the route's first hostname, else the listener's; a wildcard
    /// (`*.example.com`) is sent as `bench.example.com`, a host it matches. Err says what is
    /// missing.
    pub fn front_door(
        &self,
        section: Option<&str>,
        hostnames: &[String],
    ) -> Result<FrontDoor, String> {
        let listeners = &self.spec.listeners;
        let listener = match section {
            Some(name) => listeners.iter().find(|l| l.name == name).ok_or_else(|| {
                let names: Vec<&str> = listeners.iter().map(|l| l.name.as_str()).collect();
                format!("has no listener {name} (it has {})", names.join(", "))
            })?,
            None => ["HTTP", "HTTPS"]
                .iter()
                .find_map(|protocol| listeners.iter().find(|l| l.protocol == *protocol))
                .ok_or("has no HTTP or HTTPS listener")?,
        };
        let scheme = match listener.protocol.as_str() {
            "HTTP" => "http",
            "HTTPS" => "https",
            other => {
                return Err(format!(
                    "listener {} is {other}, not HTTP or HTTPS",
                    listener.name
                ));
            }
        };
        let address = self.status.addresses.first().ok_or(
            "has no address yet (status.addresses is empty until its controller programs it)",
        )?;
        let ip_v6 = address.type_.as_deref().is_none_or(|t| t == "IPAddress")
            && address.value.contains(':');
        let host = if ip_v6 {
            format!("[{}]", address.value)
        } else {
            address.value.clone()
        };
        let matched = hostnames.first().or(listener.hostname.as_ref());
        Ok(FrontDoor {
            url: format!("{scheme}://{host}:{}", listener.port),
            host: matched.map(|h| match h.strip_prefix("*.") {
                Some(rest) => format!("bench.{rest}"),
                None => h.clone(),
            }),
        })
    }
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AllowedRoutes {
    pub namespaces: RouteNamespaces,
    pub kinds: Vec<RouteKind>,
}

/// `allowedRoutes.namespaces`: `from` is `Same` (the default), `All` or `Selector`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct RouteNamespaces {
    pub from: Option<String>,
    pub selector: Option<LabelSelector>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct RouteKind {
    /// Default: the Gateway API group.
    pub group: Option<String>,
    pub kind: String,
}

/// Whether a listener lets an HTTPRoute in a namespace attach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    Allowed(String),
    Denied(String),
    /// It depends on the namespace's labels, which could not be read.
    Unknown(String),
}

impl Admission {
    /// Why the listener allows, refuses, or cannot be judged.
    pub fn reason(&self) -> &str {
        match self {
            Self::Allowed(why) | Self::Denied(why) | Self::Unknown(why) => why,
        }
    }
}

impl Listener {
    /// Whether an HTTPRoute in `route_namespace` may attach to this listener of a Gateway in
    /// `gateway_namespace`. `labels` are the route namespace's labels, needed only when the
    /// listener selects namespaces by label. The kinds come first: an HTTPS/HTTP listener allows
    /// HTTPRoutes unless `allowedRoutes.kinds` says otherwise; other protocols never do.
    pub fn admits(
        &self,
        route_namespace: &str,
        gateway_namespace: &str,
        labels: Option<&Result<BTreeMap<String, String>, String>>,
    ) -> Admission {
        let kinds = &self.allowed_routes.kinds;
        let http_route =
            |k: &RouteKind| k.kind == "HTTPRoute" && k.group.as_deref().is_none_or(|g| g == GROUP);
        if !kinds.is_empty() && !kinds.iter().any(http_route) {
            let names: Vec<&str> = kinds.iter().map(|k| k.kind.as_str()).collect();
            return Admission::Denied(format!(
                "allows only {} routes, not HTTPRoute",
                names.join(", ")
            ));
        }
        if kinds.is_empty() && !matches!(self.protocol.as_str(), "HTTP" | "HTTPS") {
            return Admission::Denied(format!(
                "protocol {} does not carry HTTPRoutes",
                self.protocol
            ));
        }
        let namespaces = &self.allowed_routes.namespaces;
        match namespaces.from.as_deref().unwrap_or("Same") {
            "All" => Admission::Allowed("allows routes from all namespaces".into()),
            "Same" if route_namespace == gateway_namespace => {
                Admission::Allowed("allows routes from its own namespace".into())
            }
            "Same" => Admission::Denied(format!(
                "allows routes only from its own namespace {gateway_namespace}"
            )),
            "Selector" => {
                let selector = namespaces.selector.clone().unwrap_or_default();
                match labels {
                    Some(Ok(labels)) if selects(&selector, labels) => Admission::Allowed(format!(
                        "its namespace selector matches namespace {route_namespace}"
                    )),
                    Some(Ok(_)) => Admission::Denied(format!(
                        "its namespace selector does not match namespace {route_namespace}"
                    )),
                    Some(Err(e)) => Admission::Unknown(format!(
                        "selects namespaces by label, and the labels of {route_namespace} cannot be read: {e}"
                    )),
                    None => Admission::Unknown(format!(
                        "selects namespaces by label; the labels of {route_namespace} were not read"
                    )),
                }
            }
            other => Admission::Unknown(format!("allowedRoutes.namespaces.from is {other:?}")),
        }
    }
}

/// Whether a label selector matches a set of labels (`matchLabels` and every `matchExpressions`
/// operator: In, NotIn, Exists, DoesNotExist). An empty selector matches everything.
pub fn selects(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let by_labels = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let by_expressions = selector.match_expressions.iter().flatten().all(|e| {
        let value = labels.get(&e.key);
        let values = e.values.as_deref().unwrap_or_default();
        match e.operator.as_str() {
            "In" => value.is_some_and(|v| values.contains(v)),
            "NotIn" => value.is_none_or(|v| !values.contains(v)),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    });
    by_labels && by_expressions
}

/// `status` of an HTTPRoute or an InferencePool: what each parent Gateway says about it
/// (`parents`; the v1alpha2 InferencePool spells it `parent`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ParentsStatus {
    #[serde(alias = "parent")]
    pub parents: Vec<ParentStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ParentStatus {
    pub parent_ref: ParentRef,
    pub conditions: Vec<Condition>,
}

/// A reference to a parent, usually a Gateway.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ParentRef {
    pub kind: Option<String>,
    pub name: String,
    pub namespace: Option<String>,
    pub section_name: Option<String>,
}

impl ParentRef {
    /// `namespace/name`, the namespace defaulting to the child's; the kind when it is not a
    /// Gateway; the listener when one is named.
    pub fn display(&self, child_namespace: &str) -> String {
        let namespace = self.namespace.as_deref().unwrap_or(child_namespace);
        let kind = match self.kind.as_deref() {
            None | Some("Gateway") => String::new(),
            Some(kind) => format!("{kind} "),
        };
        let listener = self
            .section_name
            .as_ref()
            .map(|s| format!(" (listener {s})"))
            .unwrap_or_default();
        format!("{kind}{namespace}/{}{listener}", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listener(json: serde_json::Value) -> Listener {
        serde_json::from_value(json).unwrap_or_default()
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn gateway(json: serde_json::Value) -> Gateway {
        serde_json::from_value(json).unwrap_or_default()
    }

    #[test]
    fn the_front_door_is_the_first_address_and_the_listeners_port_with_the_routes_host() {
        let gw = gateway(serde_json::json!({
            "spec": {"listeners": [
                {"name": "tls", "protocol": "HTTPS", "port": 443, "hostname": "*.infer.example"},
                {"name": "web", "protocol": "HTTP", "port": 8080},
            ]},
            "status": {"addresses": [{"type": "IPAddress", "value": "10.0.0.7"},
                                     {"value": "10.0.0.8"}]},
        }));
        let door = |section, hostnames: &[&str]| {
            let hostnames: Vec<String> = hostnames.iter().map(|h| h.to_string()).collect();
            gw.front_door(section, &hostnames)
        };
        // No section: the first HTTP listener, and no Host (it matches any).
        assert_eq!(
            door(None, &[]),
            Ok(FrontDoor {
                url: "http://10.0.0.7:8080".into(),
                host: None
            })
        );
        // The route's hostname first; a wildcard listener's is sent as a host it matches.
        assert_eq!(
            door(None, &["llm.example"]).map(|d| d.host),
            Ok(Some("llm.example".into()))
        );
        assert_eq!(
            door(Some("tls"), &[]),
            Ok(FrontDoor {
                url: "https://10.0.0.7:443".into(),
                host: Some("bench.infer.example".into())
            })
        );
        assert_eq!(
            door(Some("grpc"), &[]),
            Err("has no listener grpc (it has tls, web)".into())
        );
        let v6 = gateway(serde_json::json!({
            "spec": {"listeners": [{"name": "web", "protocol": "HTTP", "port": 80}]},
            "status": {"addresses": [{"value": "fd00::7"}]},
        }));
        assert_eq!(
            v6.front_door(None, &[]).map(|d| d.url),
            Ok("http://[fd00::7]:80".into())
        );
        let named = gateway(serde_json::json!({
            "spec": {"listeners": [{"name": "web", "protocol": "HTTP", "port": 80}]},
            "status": {"addresses": [{"type": "Hostname", "value": "gw.example"}]},
        }));
        assert_eq!(
            named.front_door(None, &[]).map(|d| d.url),
            Ok("http://gw.example:80".into())
        );
        let unprogrammed = gateway(serde_json::json!({
            "spec": {"listeners": [{"name": "web", "protocol": "HTTP", "port": 80}]},
        }));
        assert_eq!(
            unprogrammed.front_door(None, &[]),
            Err(
                "has no address yet (status.addresses is empty until its controller programs it)"
                    .into()
            )
        );
        let tcp = gateway(serde_json::json!({
            "spec": {"listeners": [{"name": "raw", "protocol": "TCP", "port": 9000}]},
            "status": {"addresses": [{"value": "10.0.0.9"}]},
        }));
        assert_eq!(
            tcp.front_door(None, &[]),
            Err("has no HTTP or HTTPS listener".into())
        );
        assert_eq!(
            tcp.front_door(Some("raw"), &[]),
            Err("listener raw is TCP, not HTTP or HTTPS".into())
        );
    }

    #[test]
    fn a_listener_admits_by_kind_protocol_and_namespace() {
        let same = listener(serde_json::json!({"name": "http", "protocol": "HTTP"}));
        assert_eq!(
            same.admits("infra", "infra", None),
            Admission::Allowed("allows routes from its own namespace".into())
        );
        assert_eq!(
            same.admits("team-a", "infra", None),
            Admission::Denied("allows routes only from its own namespace infra".into())
        );
        let all = listener(serde_json::json!({"name": "https", "protocol": "HTTPS",
            "allowedRoutes": {"namespaces": {"from": "All"}}}));
        assert_eq!(
            all.admits("team-a", "infra", None),
            Admission::Allowed("allows routes from all namespaces".into())
        );
        let tcp = listener(serde_json::json!({"name": "tcp", "protocol": "TCP",
            "allowedRoutes": {"namespaces": {"from": "All"}}}));
        assert_eq!(
            tcp.admits("team-a", "infra", None),
            Admission::Denied("protocol TCP does not carry HTTPRoutes".into())
        );
        let grpc_only = listener(serde_json::json!({"name": "http", "protocol": "HTTP",
            "allowedRoutes": {"kinds": [{"kind": "GRPCRoute"}], "namespaces": {"from": "All"}}}));
        assert_eq!(
            grpc_only.admits("team-a", "infra", None),
            Admission::Denied("allows only GRPCRoute routes, not HTTPRoute".into())
        );
    }

    #[test]
    fn a_selector_listener_needs_the_namespace_labels() {
        let selector = listener(serde_json::json!({"name": "http", "protocol": "HTTP",
            "allowedRoutes": {"namespaces": {"from": "Selector",
                "selector": {"matchLabels": {"gateway-access": "true"}}}}}));
        let granted = Ok(labels(&[("gateway-access", "true")]));
        assert_eq!(
            selector.admits("team-a", "infra", Some(&granted)),
            Admission::Allowed("its namespace selector matches namespace team-a".into())
        );
        let other = Ok(labels(&[("kubernetes.io/metadata.name", "team-a")]));
        assert_eq!(
            selector.admits("team-a", "infra", Some(&other)),
            Admission::Denied("its namespace selector does not match namespace team-a".into())
        );
        let forbidden = Err("forbidden: cannot get namespaces".to_string());
        assert_eq!(
            selector.admits("team-a", "infra", Some(&forbidden)),
            Admission::Unknown(
                "selects namespaces by label, and the labels of team-a cannot be read: forbidden: cannot get namespaces"
                    .into()
            )
        );
    }

    #[test]
    fn selectors_match_labels_and_expressions() {
        let selector: LabelSelector = serde_json::from_value(serde_json::json!({
            "matchLabels": {"env": "prod"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["gpu", "cpu"]},
                {"key": "legacy", "operator": "DoesNotExist"},
                {"key": "team", "operator": "Exists"},
                {"key": "zone", "operator": "NotIn", "values": ["b"]}
            ]
        }))
        .unwrap_or_default();
        let ok = labels(&[("env", "prod"), ("tier", "gpu"), ("team", "a")]);
        assert!(selects(&selector, &ok));
        let mut legacy = ok.clone();
        legacy.insert("legacy".into(), "1".into());
        assert!(!selects(&selector, &legacy));
        let mut zone_b = ok.clone();
        zone_b.insert("zone".into(), "b".into());
        assert!(!selects(&selector, &zone_b));
        assert!(!selects(
            &selector,
            &labels(&[("env", "prod"), ("team", "a")])
        ));
        assert!(selects(&LabelSelector::default(), &BTreeMap::new()));
    }

    #[test]
    fn conditions_and_parents_read_as_people_say_them() {
        let status: ParentsStatus = serde_json::from_value(serde_json::json!({"parents": [{
            "parentRef": {"group": GROUP, "kind": "Gateway", "name": "gw", "sectionName": "http"},
            "controllerName": "example.com/gateway",
            "conditions": [
                {"type": "Accepted", "status": "True", "reason": "Accepted", "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"type": "ResolvedRefs", "status": "False", "reason": "BackendNotFound", "message": "pool demo-pool not found"}
            ]
        }]}))
        .unwrap_or_default();
        let parent = &status.parents[0];
        assert_eq!(
            parent.parent_ref.display("team-a"),
            "team-a/gw (listener http)"
        );
        let shown: Vec<String> = parent.conditions.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            shown,
            [
                "Accepted=True (Accepted)",
                "ResolvedRefs=False (BackendNotFound: pool demo-pool not found)"
            ]
        );
        assert!(condition(&parent.conditions, "Accepted").is_some_and(Condition::is_true));
    }
}
