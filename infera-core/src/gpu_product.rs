//! GPU products as users name them (`MI300X`) and as AMD's node labeller puts them on nodes.
//!
//! The labeller of ROCm/k8s-device-plugin (`cmd/k8s-node-labeller/main.go`, the `product-name`
//! generator and `createLabels`; the AMD GPU Operator deploys the same labeller) sets
//! `amd.com/gpu.product-name` to the card's sysfs `product_name` (or libdrm's marketing name)
//! with spaces replaced by `_` and parentheses removed: `AMD_Instinct_MI300X_OAM`,
//! `Instinct_MI210` (the labeller's own test, `main_test.go`). On a node whose GPUs are not all
//! one product it sets `amd.com/gpu.product-name.<NAME>=<count>` instead, so such a node never
//! matches a product: a pool is never placed on a GPU it did not name.
//!
//! A product without `_` (`MI300X`) matches the label values `AMD_Instinct_MI300X`,
//! `AMD_Instinct_MI300X_OAM`, `Instinct_MI300X` and `Instinct_MI300X_OAM`; a product with `_` is
//! a label value as the labeller writes it (`AMD_Instinct_MI300X_HF`) and matches only itself.

/// The node label AMD's node labeller writes the GPU product to.
pub const PRODUCT_LABEL: &str = "amd.com/gpu.product-name";

/// What the labeller's product names start with, longest first.
const PREFIXES: [&str; 2] = ["AMD_Instinct_", "Instinct_"];
/// The form-factor suffix some boards' product names end with.
const FORM_FACTOR: &str = "_OAM";

/// The label values that mean `product`.
pub fn label_values(product: &str) -> Vec<String> {
    if product.contains('_') {
        return vec![product.to_string()];
    }
    PREFIXES
        .iter()
        .flat_map(|prefix| {
            [
                format!("{prefix}{product}"),
                format!("{prefix}{product}{FORM_FACTOR}"),
            ]
        })
        .collect()
}

/// The product a label value names, as users write it: the short name (`MI300X`) when the
/// value is one of [`label_values`] of it, else the value itself.
pub fn product_of(label_value: &str) -> String {
    let short = PREFIXES
        .iter()
        .find_map(|prefix| label_value.strip_prefix(prefix))
        .map(|rest| rest.strip_suffix(FORM_FACTOR).unwrap_or(rest));
    match short {
        Some(short) if !short.is_empty() && !short.contains('_') => short.to_string(),
        _ => label_value.to_string(),
    }
}

/// Whether a node whose product label is `label_value` has `product`.
pub fn matches(product: &str, label_value: &str) -> bool {
    label_values(product).iter().any(|v| v == label_value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_name_matches_the_labellers_spellings_of_it_only() {
        assert_eq!(
            label_values("MI300X"),
            [
                "AMD_Instinct_MI300X",
                "AMD_Instinct_MI300X_OAM",
                "Instinct_MI300X",
                "Instinct_MI300X_OAM"
            ]
        );
        assert!(matches("MI300X", "AMD_Instinct_MI300X_OAM"));
        assert!(matches("MI210", "Instinct_MI210"));
        for other in ["AMD_Instinct_MI300A", "AMD_Instinct_MI300X_HF", "MI300X"] {
            assert!(!matches("MI300X", other), "{other}");
        }
        assert_eq!(
            label_values("AMD_Instinct_MI300X_HF"),
            ["AMD_Instinct_MI300X_HF"]
        );
    }

    #[test]
    fn a_label_value_reads_back_as_the_product_that_matches_it() {
        for (value, product) in [
            ("AMD_Instinct_MI300X_OAM", "MI300X"),
            ("AMD_Instinct_MI325X", "MI325X"),
            ("Instinct_MI210", "MI210"),
            ("AMD_Instinct_MI300X_HF", "AMD_Instinct_MI300X_HF"),
            ("AMD_Radeon_Pro_W7900", "AMD_Radeon_Pro_W7900"),
            ("AMD_Instinct_", "AMD_Instinct_"),
        ] {
            assert_eq!(product_of(value), product, "{value}");
            assert!(matches(&product_of(value), value), "{value}");
        }
    }
}
