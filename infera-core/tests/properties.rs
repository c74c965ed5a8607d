//! Property tests: arbitrary specs never make validation or rendering panic, and whatever
//! validates renders only names that are DNS labels of at most 63 characters.

#![allow(clippy::expect_used, reason = "a test fails by panicking")]

use infera_core::{ChildKind, naming, render, validate};
use proptest::prelude::*;

#[path = "common/arbitrary.rs"]
mod arbitrary;
use arbitrary::deployment;

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn validation_and_rendering_never_panic_and_names_fit(idep in deployment()) {
        if let Ok(valid) = validate(&idep) {
            let children = render(&valid);
            let mut seen = std::collections::BTreeSet::new();
            for child in &children {
                let name = child.name();
                prop_assert!(naming::is_dns_label(name), "{name:?} is not a DNS label");
                prop_assert!(seen.insert((child.kind(), name.to_string())), "{name} rendered twice");
                // What controllers derive: StatefulSet pods and revision labels, LWS group pods.
                let derived = match child.kind() {
                    ChildKind::StatefulSet => format!("{name}-999-0123456789"),
                    ChildKind::LeaderWorkerSet => format!("{name}-999-63-0123456789"),
                    _ => name.to_string(),
                };
                prop_assert!(derived.len() <= 63, "{derived} is longer than 63");
            }
            prop_assert!(!valid.workers.is_empty());
        }
    }
}
