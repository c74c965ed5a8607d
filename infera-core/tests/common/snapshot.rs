//! The pinned upstream snapshot (AMD-AGI/Infera at 5890f7f), read in place by the tests that hold
//! our work against upstream's: `infera-core/tests/upstream_fields.rs` and
//! `tests/tests/isolated/upstream_differential.rs` (included there with `#[path]`).

use std::path::{Path, PathBuf};

/// The pinned upstream snapshot: `$INFERA_UPSTREAM_DIR`, else next to the repository
/// (`../shared/upstream`), else where this machine keeps it (`/work/shared/upstream`), as
/// `tests/upstream/env.sh` finds it.
pub fn upstream() -> PathBuf {
    let pinned = "shared/upstream/infera-5890f7f";
    std::env::var_os("INFERA_UPSTREAM_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(pinned),
            Path::new("/work").join(pinned),
        ])
        .find(|dir| dir.is_dir())
        .unwrap_or_else(|| panic!("the upstream snapshot ({pinned}) is not next to the repository nor in /work; set INFERA_UPSTREAM_DIR"))
}

/// `text` with every `<UPPER_CASE>` placeholder replaced by `filled`.
pub fn fill_placeholders(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('>') {
            Some(end)
                if end > 0
                    && after[..end]
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') =>
            {
                out.push_str("filled");
                rest = &after[end + 1..];
            }
            _ => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}
