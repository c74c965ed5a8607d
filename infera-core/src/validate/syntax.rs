//! The syntax of single values: names, resource names and quantities.

use std::ops::RangeInclusive;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::{
    Errors,
    limits::{MAX_DURATION_LENGTH, MAX_REPLICAS, MAX_SLO_MILLISECONDS},
};
use crate::{
    naming::{MAX_DNS_LABEL, MAX_DNS_SUBDOMAIN},
    types::LatencySlo,
};

/// True when `s` has the form of [`crate::naming::DNS_LABEL_PATTERN`], whatever its length: the
/// CEL rules match that pattern and state the length limits as rules of their own.
pub(super) fn has_dns_label_form(s: &str) -> bool {
    let bytes = s.as_bytes();
    bytes.first().is_some_and(u8::is_ascii_lowercase)
        && bytes.last().is_some_and(|b| *b != b'-')
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// An RFC 1123 label's form, whatever its length: lowercase letters, digits and '-', starting
/// and ending with a letter or digit.
pub(super) fn has_label_form(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// An RFC 1123 DNS subdomain: dot-separated labels of lowercase letters, digits and '-'.
pub(super) fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_DNS_SUBDOMAIN
        && s.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        })
}

/// An RFC 1123 label, the form of a namespace name: unlike our own names it may start with a digit.
pub(super) fn is_rfc1123_label(s: &str) -> bool {
    s.len() <= MAX_DNS_LABEL && !s.contains('.') && is_dns_subdomain(s)
}

/// What [`super::limits::GPU_PRODUCT_PATTERN`] admits: letters, digits, `-`, `_` and `.`,
/// starting and ending with a letter or digit.
pub(super) fn is_gpu_product(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
        && s.as_bytes().last().is_some_and(u8::is_ascii_alphanumeric)
}

/// A `prefix/name` extended resource name, e.g. `amd.com/gpu`: what
/// [`super::limits::RESOURCE_NAME_PATTERN`] and its length limit admit, with the name part at
/// most 63 characters as Kubernetes requires.
pub(super) fn is_resource_name(s: &str) -> bool {
    let (prefix, name) = match s.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, s),
    };
    s.len() <= MAX_DNS_SUBDOMAIN
        && prefix.is_none_or(is_dns_subdomain)
        && !name.is_empty()
        && name.len() <= MAX_DNS_LABEL
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name
            .as_bytes()
            .first()
            .is_some_and(u8::is_ascii_alphanumeric)
        && name
            .as_bytes()
            .last()
            .is_some_and(u8::is_ascii_alphanumeric)
}

/// Reports `quantity` at `path` unless it is a size.
pub(super) fn check_quantity(errors: &mut Errors, path: &str, quantity: &Quantity) {
    if !is_quantity(&quantity.0) {
        errors.push(
            path,
            format!(
                "{:?} is not a size; write a non-negative quantity like 64Gi or 500m",
                quantity.0
            ),
        );
    }
}

/// Kubernetes quantity syntax for a size: a non-negative decimal number with an optional binary,
/// decimal or exponent suffix.
pub fn is_quantity(s: &str) -> bool {
    let s = s.strip_prefix('+').unwrap_or(s);
    let digits_end = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(digits_end);
    let number_ok = !number.is_empty() && number != "." && number.matches('.').count() <= 1;
    let suffix_ok = matches!(
        suffix,
        "" | "Ki"
            | "Mi"
            | "Gi"
            | "Ti"
            | "Pi"
            | "Ei"
            | "n"
            | "u"
            | "m"
            | "k"
            | "M"
            | "G"
            | "T"
            | "P"
            | "E"
    ) || suffix
        .strip_prefix(['e', 'E'])
        .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e))
        .is_some_and(|e| !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()));
    number_ok && suffix_ok
}

/// Reports `value` at `path` if it is empty or longer than `max` characters (the schema's
/// `minLength: 1` and `maxLength`).
pub(super) fn check_length(errors: &mut Errors, path: &str, value: &str, max: usize) {
    if value.is_empty() {
        errors.push(path, "must not be empty; set a value or remove the field");
    } else {
        check_max_length(errors, path, value, max);
    }
}

/// Reports `value` at `path` if it is longer than `max` characters (the schema's `maxLength`,
/// which counts characters, not bytes).
pub(super) fn check_max_length(errors: &mut Errors, path: &str, value: &str, max: usize) {
    let length = value.chars().count();
    if length > max {
        errors.push(
            path,
            format!("must be at most {max} characters (now {length}); shorten it"),
        );
    }
}

/// Reports `value` at `path` if it is outside `range`: below it with `below`, the rule's own
/// message, above it as the schema's `maximum`. True when it is inside.
pub(super) fn check_range(
    errors: &mut Errors,
    path: &str,
    value: i32,
    range: RangeInclusive<i32>,
    below: &str,
) -> bool {
    if value < *range.start() {
        errors.push(path, below);
    } else if value > *range.end() {
        let max = range.end();
        errors.push(
            path,
            format!("must be at most {max} (now {value}); lower it"),
        );
    }
    range.contains(&value)
}

/// Latency targets at `path` (`spec.planner.slo`, `spec.monitoring.slo`), each within
/// `1..=MAX_SLO_MILLISECONDS`. True when both are.
pub(super) fn check_slo(errors: &mut Errors, path: &str, slo: &LatencySlo) -> bool {
    [
        ("ttftP95Milliseconds", slo.ttft_p95_milliseconds),
        ("itlP95Milliseconds", slo.itl_p95_milliseconds),
    ]
    .map(|(field, value)| {
        check_range(
            errors,
            &format!("{path}.{field}"),
            value,
            1..=MAX_SLO_MILLISECONDS,
            "must be 1 or more; set the latency target in milliseconds",
        )
    })
    .iter()
    .all(|ok| *ok)
}

/// A pair of replica bounds, each within `1..=MAX_REPLICAS` and `min` not above `max`: each
/// out-of-range bound is reported at its path, a `min` above `max` at `min`'s with `above`.
pub(super) fn check_replica_bounds(
    errors: &mut Errors,
    (min_path, min): (&str, i32),
    (max_path, max): (&str, i32),
    above: &str,
) {
    let below = "must be 1 or more; set the fewest replicas to keep";
    let min_ok = check_range(errors, min_path, min, 1..=MAX_REPLICAS, below);
    let max_ok = check_range(errors, max_path, max, 1..=MAX_REPLICAS, below);
    if min_ok && max_ok && min > max {
        errors.push(min_path, above);
    }
}

/// Seconds of a duration at `path` of the form of [`super::limits::DURATION_PATTERN`] (a whole
/// number of seconds, minutes or hours), when inside `range`; otherwise `None` after reporting
/// why, with `out_of_range` when the duration is well formed.
pub(super) fn check_duration(
    errors: &mut Errors,
    path: &str,
    value: &str,
    range: RangeInclusive<i32>,
    out_of_range: &str,
) -> Option<i32> {
    if value.chars().count() > MAX_DURATION_LENGTH {
        check_max_length(errors, path, value, MAX_DURATION_LENGTH);
        return None;
    }
    let Some(seconds) = duration_seconds(value) else {
        errors.push(
            path,
            format!(
                "{value:?} is not a duration; write a whole number of seconds, minutes or hours such as 90s, 30m or 2h"
            ),
        );
        return None;
    };
    match i32::try_from(seconds) {
        Ok(seconds) if range.contains(&seconds) => Some(seconds),
        _ => {
            errors.push(path, out_of_range);
            None
        }
    }
}

/// Seconds of a duration of the form of [`super::limits::DURATION_PATTERN`]: one to six digits
/// and `s`, `m` or `h`.
fn duration_seconds(value: &str) -> Option<i64> {
    let unit = match value.chars().last()? {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        _ => return None,
    };
    // The unit is one ASCII byte.
    let digits = &value[..value.len() - 1];
    let number_ok = (1..=6).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
    number_ok
        .then(|| digits.parse::<i64>().ok())
        .flatten()
        .map(|n| n * unit)
}

#[cfg(test)]
mod tests {
    use super::{super::found, *};

    #[test]
    fn durations_are_whole_seconds_minutes_or_hours() {
        for (value, seconds) in [("90s", 90), ("30m", 1800), ("2h", 7200), ("24h", 86400)] {
            assert_eq!(duration_seconds(value), Some(seconds), "{value}");
        }
        for bad in [
            "", "h", "30", "1h30m", "1.5h", "-1h", "30 m", "1234567s", "3é", "2H",
        ] {
            assert_eq!(duration_seconds(bad), None, "{bad}");
        }
    }

    #[test]
    fn dns_label_form_is_the_pattern_whatever_the_length() {
        for good in ["a", "demo", "decode-2", "a1", &"x".repeat(70)] {
            assert!(has_dns_label_form(good), "{good}");
        }
        for bad in [
            "", "Demo", "demo_bad", "2demo", "-demo", "demo-", "de.mo", "dé",
        ] {
            assert!(!has_dns_label_form(bad), "{bad}");
        }
    }

    #[test]
    fn dns_subdomains() {
        for good in ["gw", "my-gateway.infra", "0gw", &"a".repeat(253)] {
            assert!(is_dns_subdomain(good), "{good}");
        }
        for bad in [
            "",
            "My Gateway",
            "gw.",
            ".gw",
            "-gw",
            "gw-.x",
            &"a".repeat(254),
        ] {
            assert!(!is_dns_subdomain(bad), "{bad}");
        }
    }

    #[test]
    fn resource_names() {
        for good in [
            "amd.com/gpu",
            "amd.com/cpx_nps4",
            "gpu",
            "example.com/A.b-c",
        ] {
            assert!(is_resource_name(good), "{good}");
        }
        let long_prefix = format!("{}.com/gpu", "a".repeat(246)); // 254 characters in all
        for bad in [
            "amd.com/",
            "/gpu",
            "amd.com/gpu/x",
            "Amd.com/gpu",
            "amd.com/-gpu",
            &long_prefix,
        ] {
            assert!(!is_resource_name(bad), "{bad}");
        }
        assert!(!is_resource_name(&format!("amd.com/{}", "g".repeat(64))));
    }

    #[test]
    fn quantities() {
        for good in ["64Gi", "500m", "1", "1.5", "+2", "1e3", "1.5E-3", "0"] {
            assert!(is_quantity(good), "{good}");
        }
        for bad in ["", "-1Gi", "64 GB", "1GB", ".", "1.2.3", "1e", "Gi"] {
            assert!(!is_quantity(bad), "{bad}");
        }
        assert_eq!(
            found(|e| check_quantity(e, "spec.nats.storageSize", &Quantity("64 GB".into()))),
            [
                r#"spec.nats.storageSize: "64 GB" is not a size; write a non-negative quantity like 64Gi or 500m"#
            ]
        );
    }

    #[test]
    fn lengths() {
        assert!(found(|e| check_length(e, "spec.image", "x", 3)).is_empty());
        assert!(found(|e| check_length(e, "spec.image", "xyz", 3)).is_empty());
        assert_eq!(
            found(|e| check_length(e, "spec.image", "", 3)),
            ["spec.image: must not be empty; set a value or remove the field"]
        );
        assert_eq!(
            found(|e| check_length(e, "spec.image", "wxyz", 3)),
            ["spec.image: must be at most 3 characters (now 4); shorten it"]
        );
    }

    #[test]
    fn lengths_count_characters_like_the_api_server() {
        assert!(found(|e| check_length(e, "spec.image", "ééé", 3)).is_empty());
    }

    #[test]
    fn max_lengths_allow_empty_values() {
        assert!(found(|e| check_max_length(e, "x.args[0]", "", 3)).is_empty());
        assert_eq!(
            found(|e| check_max_length(e, "x.args[0]", "wxyz", 3)),
            ["x.args[0]: must be at most 3 characters (now 4); shorten it"]
        );
    }

    #[test]
    fn ranges() {
        let check = |value| {
            let mut inside = false;
            let errors = found(|e| inside = check_range(e, "x.replicas", value, 0..=1000, "below"));
            (inside, errors)
        };
        assert_eq!(check(0), (true, vec![]));
        assert_eq!(check(1000), (true, vec![]));
        assert_eq!(check(-1), (false, vec!["x.replicas: below".to_string()]));
        assert_eq!(
            check(1001),
            (
                false,
                vec!["x.replicas: must be at most 1000 (now 1001); lower it".to_string()]
            )
        );
    }
}
