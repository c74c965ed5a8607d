//! INF304: a `--for FILE` spec names every image by digest.

use super::{Check, Facts, check};
use crate::spec::mutable_image_warning;

/// INF304, only for a `--for` spec: a warning that lists each mutable image.
pub(super) fn pinned(f: &Facts) -> Option<Check> {
    let mutable = f.mutable_images.as_ref()?;
    let c = check("INF304", "images", "image-pinning");
    Some(if mutable.is_empty() {
        c.pass("every image the spec names is pinned by digest")
    } else {
        c.warn(
            format!("{} image(s) are mutable tags", mutable.len()),
            "pin each by digest, e.g. rocm/infera@sha256:<64 hex> (find it with `crane digest IMAGE` or your registry); spec.imagePolicy.requireDigest makes this an error",
        )
        .details(mutable.iter().map(mutable_image_warning).collect())
    })
}
