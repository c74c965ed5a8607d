//! The revision of a graph: a hash of everything that shapes its worker pods — every worker
//! pool's pod templates as rendered (image, command, arguments with the injected flags, env,
//! resources, probes, overlays), without replica counts. Any change that would replace a worker
//! pod changes it; scaling does not. Worker pods carry it as the `infera.amd.com/revision` label
//! and the `INFERA_REVISION` environment variable, so discovery can pair a prefill with a decode
//! of the same revision.

use super::{Context, pod};
use crate::flags::Rank;

/// Hex digits of a revision: 40 bits, as short as Kubernetes' `pod-template-hash` and plenty
/// for the revisions of one deployment.
const LENGTH: usize = 10;

/// The revision of the worker pods `cx` renders; `cx` must not carry a revision itself.
pub(super) fn of(cx: &Context<'_>) -> String {
    let templates: Vec<_> = cx
        .deployment
        .workers
        .iter()
        .flat_map(|worker| {
            let ranks: &[Rank] = if worker.multi_node() {
                &[Rank::Leader, Rank::Follower]
            } else {
                &[Rank::Single]
            };
            ranks.iter().map(|rank| pod::worker(cx, worker, *rank))
        })
        .collect();
    let value = serde_json::to_value(&templates).unwrap_or_default();
    let hex = format!("{:016x}", crate::hash::json(&value));
    hex[..LENGTH].to_string()
}
