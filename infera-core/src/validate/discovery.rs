//! Discovery: `etcdEndpoint` is set exactly when `discoveryBackend` is `etcd`.

use super::{Errors, limits::MAX_REFERENCE_LENGTH, syntax::check_length};
use crate::{flags::DiscoveryFlags, types::DiscoveryBackend};

/// How the server and workers discover each other, from `spec.discoveryBackend` and
/// `spec.etcdEndpoint` (Kubernetes where they are wrong).
pub(super) fn flags(
    errors: &mut Errors,
    backend: Option<DiscoveryBackend>,
    etcd_endpoint: Option<&str>,
) -> DiscoveryFlags {
    match (backend.unwrap_or_default(), etcd_endpoint) {
        (DiscoveryBackend::Kubernetes, None) => DiscoveryFlags::Kubernetes,
        (DiscoveryBackend::Etcd, Some(endpoint)) => {
            check_length(errors, "spec.etcdEndpoint", endpoint, MAX_REFERENCE_LENGTH);
            DiscoveryFlags::Etcd(endpoint.into())
        }
        (DiscoveryBackend::Etcd, None) => {
            errors.push(
                "spec.etcdEndpoint",
                "is required when discoveryBackend is etcd; set the URL of your etcd",
            );
            DiscoveryFlags::Kubernetes
        }
        (DiscoveryBackend::Kubernetes, Some(_)) => {
            errors.push(
                "spec.etcdEndpoint",
                "is only used when discoveryBackend is etcd; remove it or set discoveryBackend: etcd",
            );
            DiscoveryFlags::Kubernetes
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{super::found, *};

    const ETCD: Option<DiscoveryBackend> = Some(DiscoveryBackend::Etcd);

    fn discovery_of(
        backend: Option<DiscoveryBackend>,
        endpoint: Option<&str>,
    ) -> (DiscoveryFlags, Vec<String>) {
        let mut built = DiscoveryFlags::Kubernetes;
        let errors = found(|e| built = flags(e, backend, endpoint));
        (built, errors)
    }

    #[test]
    fn kubernetes_is_the_default() {
        assert_eq!(
            discovery_of(None, None),
            (DiscoveryFlags::Kubernetes, vec![])
        );
        assert_eq!(
            discovery_of(Some(DiscoveryBackend::Kubernetes), None),
            (DiscoveryFlags::Kubernetes, vec![])
        );
    }

    #[test]
    fn etcd_with_an_endpoint() {
        assert_eq!(
            discovery_of(ETCD, Some("http://etcd:2379")),
            (DiscoveryFlags::Etcd("http://etcd:2379".into()), vec![])
        );
    }

    #[test]
    fn etcd_without_an_endpoint() {
        assert_eq!(
            discovery_of(ETCD, None).1,
            [
                "spec.etcdEndpoint: is required when discoveryBackend is etcd; set the URL of your etcd"
            ]
        );
    }

    #[test]
    fn an_endpoint_without_etcd() {
        assert_eq!(
            discovery_of(None, Some("http://etcd:2379")).1,
            [
                "spec.etcdEndpoint: is only used when discoveryBackend is etcd; remove it or set discoveryBackend: etcd"
            ]
        );
    }

    #[test]
    fn the_endpoint_is_not_empty_nor_too_long() {
        assert_eq!(
            discovery_of(ETCD, Some("")).1,
            ["spec.etcdEndpoint: must not be empty; set a value or remove the field"]
        );
        let long = format!("http://{}", "e".repeat(MAX_REFERENCE_LENGTH));
        assert_eq!(
            discovery_of(ETCD, Some(&long)).1,
            ["spec.etcdEndpoint: must be at most 512 characters (now 519); shorten it"]
        );
    }
}
