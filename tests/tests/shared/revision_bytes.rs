//! ControllerRevisions whose `data` holds any text can be renumbered, as a rollback does, on the
//! real API server: written as [`infera_core::history::to_go_json`] encodes them, the server's
//! re-encoding of `data` during a merge patch changes none of its bytes. The control case shows
//! the failure this guards against: the same data as serde_json writes it is refused once it
//! holds `<`, `>`, `&`, U+2028 or U+2029.

use infera_core::history::to_go_json;
use infera_e2e::{
    TestNamespace, admin,
    kube::{
        Api, Client,
        api::{Patch, PatchParams, PostParams},
        core::Request,
    },
};
use k8s_openapi::{api::apps::v1::ControllerRevision, apimachinery::pkg::runtime::RawExtension};
use proptest::{prelude::*, test_runner::TestRunner};
use serde_json::{Value, json};

/// Text mixing what Go's encoder escapes with quotes, escapes, non-ASCII and astral characters.
fn text() -> impl Strategy<Value = String> {
    "[a-z0-9<>&\u{2028}\u{2029}é漢😀 \"\\\\/\t\n-]{0,24}"
}

fn revision(name: &str, data: Value) -> ControllerRevision {
    ControllerRevision {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        data: Some(RawExtension(data)),
        revision: 1,
    }
}

/// Creates `revision` with `body` as its exact bytes, then renumbers it with a merge patch.
async fn create_and_renumber(
    client: &Client,
    api: &Api<ControllerRevision>,
    name: &str,
    body: Vec<u8>,
) -> Result<ControllerRevision, kube::Error> {
    let request = Request::new(api.resource_url())
        .create(&PostParams::default(), body)
        .map_err(kube::Error::BuildRequest)?;
    client.request::<ControllerRevision>(request).await?;
    let patch = json!({"revision": 2});
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn revisions_of_any_text_are_renumbered_and_keep_their_data() -> anyhow::Result<()> {
    let admin = admin().await?;
    let ns = TestNamespace::new(&admin, "revision-bytes").await?;
    let api: Api<ControllerRevision> = ns.api();

    // The control: serde_json's bytes of the seed's own argument are refused on renumbering.
    let seed = json!({"spec": {"args": ["--disaggregation-ib-device", "<rdma-nic>"]}});
    let plain = serde_json::to_vec(&revision("plain", seed.clone()))?;
    match create_and_renumber(&admin, &api, "plain", plain).await {
        Err(kube::Error::Api(status)) if status.code == 422 => {
            assert!(
                status.message.contains("field is immutable"),
                "{}",
                status.message
            );
        }
        other => anyhow::bail!("serde_json's bytes were renumbered: {other:?}"),
    }

    let mut runner = TestRunner::new(proptest::test_runner::Config {
        cases: 48,
        ..Default::default()
    });
    let strategy = (
        text(),
        text(),
        prop::collection::btree_map(text(), text(), 0..3),
    );
    let case = std::sync::atomic::AtomicUsize::new(0);
    runner
        .run(&strategy, |(arg, image, env)| {
            let name = format!(
                "case-{}",
                case.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            );
            let data = json!({"spec": {"image": image, "args": ["--x", arg], "env": env}});
            let body = to_go_json(&revision(&name, data.clone()))
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let renumbered = tokio::task::block_in_place(|| {
                tokio::runtime::Handle::current()
                    .block_on(create_and_renumber(&admin, &api, &name, body))
            })
            .map_err(|e| TestCaseError::fail(format!("{data}: {e}")))?;
            prop_assert_eq!(renumbered.revision, 2);
            prop_assert_eq!(renumbered.data.map(|d| d.0), Some(data));
            Ok(())
        })
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    ns.cleanup().await
}
