//! INF501: a default StorageClass, for the volume of the managed NATS.

use super::{Check, Facts, check};

/// INF501: exactly one default StorageClass.
pub(super) fn default_storage_class(f: &Facts) -> Check {
    let storage = check("INF501", "storage", "default-storageclass");
    match &f.default_storage_classes {
        Some(Ok(names)) => match names.as_slice() {
            [name] => storage.pass(format!("default StorageClass {name}")),
            [] => storage.warn(
                "no default StorageClass: the managed NATS (nats.deploy: true) cannot get its volume",
                "mark a StorageClass as default, or set nats.deploy: false and point nats.url at your NATS",
            ),
            many => storage.warn(
                format!("{} default StorageClasses: {}", many.len(), many.join(", ")),
                "mark exactly one as default (storageclass.kubernetes.io/is-default-class)",
            ),
        },
        Some(Err(e)) => storage.unreadable("listing StorageClasses", e),
        None => storage.skip("not checked"),
    }
}
