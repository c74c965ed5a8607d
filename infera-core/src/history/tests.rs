use serde_json::{Value, json};

use super::*;

fn stored(hash: &str, revision: i64) -> Stored {
    Stored {
        name: revision_name("demo", hash),
        hash: hash.into(),
        revision,
    }
}

#[test]
fn a_new_revision_is_created_one_above_the_newest() {
    assert_eq!(
        record("demo", &[], "aaa"),
        Some(Record::Create {
            name: "demo-aaa".into(),
            revision: 1
        })
    );
    let history = [stored("aaa", 1), stored("bbb", 2)];
    assert_eq!(
        record("demo", &history, "ccc"),
        Some(Record::Create {
            name: "demo-ccc".into(),
            revision: 3
        })
    );
}

#[test]
fn the_newest_revision_again_needs_nothing() {
    let history = [stored("bbb", 2), stored("aaa", 1)];
    assert_eq!(record("demo", &history, "bbb"), None);
}

#[test]
fn an_earlier_revision_again_is_renumbered_not_copied() {
    // As a StatefulSet's rollback: the equal revision gets the next number.
    let history = [stored("aaa", 1), stored("bbb", 2), stored("ccc", 3)];
    assert_eq!(
        record("demo", &history, "aaa"),
        Some(Record::Renumber {
            name: "demo-aaa".into(),
            revision: 4
        })
    );
}

#[test]
fn pruning_deletes_the_oldest_revisions_no_pod_runs_beyond_the_limit() {
    let history = [
        stored("aaa", 1),
        stored("bbb", 2),
        stored("ccc", 3),
        stored("ddd", 4),
        stored("eee", 5),
    ];
    // eee is the update revision, bbb still runs on a pod: of aaa, ccc, ddd two are kept.
    let live = BTreeSet::from(["eee", "bbb"]);
    assert_eq!(prune(&history, &live, 2), ["demo-aaa"]);
    assert_eq!(
        prune(&history, &live, 0),
        ["demo-aaa", "demo-ccc", "demo-ddd"]
    );
    assert_eq!(prune(&history, &live, 10), Vec::<String>::new());
}

fn spec() -> Value {
    json!({
        "backendFramework": "sglang",
        "image": "rocm/infera:sglang-v0.1.1",
        "model": {"source": "pvc://weights"},
        "rollout": {"maxSurge": 1},
        "services": {
            "server": {"componentType": "server", "args": ["--router-tokenizer-path", "m"]},
            "prefill": {"componentType": "worker", "role": "prefill", "replicas": 1, "args": ["--a"]},
            "decode": {"componentType": "worker", "role": "decode", "replicas": 2},
        },
    })
}

#[test]
fn changes_name_each_field_with_old_and_new_scalars() {
    let before = spec();
    let mut after = spec();
    after["image"] = json!("rocm/infera:sglang-v0.1.2");
    after["model"]["source"] = json!("pvc://other");
    after["services"]["prefill"]["args"] = json!(["--b"]);
    after["services"]["decode"]["image"] = json!("rocm/infera:decode");
    // Scaling and rollout settings are no change of a revision.
    after["services"]["decode"]["replicas"] = json!(4);
    after["rollout"] = json!({"maxSurge": 2});
    insta::assert_snapshot!(
        changes(Some(&before), &after, 2),
        @"image: rocm/infera:sglang-v0.1.1 → rocm/infera:sglang-v0.1.2, model.source: pvc://weights → pvc://other, decode.image: (none) → rocm/infera:decode, prefill.args"
    );
}

#[test]
fn changes_name_services_added_and_removed_and_say_when_there_is_no_predecessor() {
    let before = spec();
    let mut after = spec();
    let services = after["services"].as_object_mut().expect("services");
    services.remove("prefill");
    services.insert("mixed".into(), json!({"componentType": "worker"}));
    assert_eq!(
        changes(Some(&before), &after, 5),
        "mixed added, prefill removed"
    );
    assert_eq!(changes(None, &after, 1), "initial");
    assert_eq!(changes(None, &after, 4), "-");
    assert_eq!(
        changes(Some(&before), &before, 3),
        "spec unchanged (pods rendered anew)"
    );
}

#[test]
fn restore_returns_to_the_stored_spec_keeping_live_scaling_and_rollout_settings() {
    let stored = spec();
    let mut live = spec();
    live["image"] = json!("rocm/infera:sglang-v0.1.2");
    live["revisionHistoryLimit"] = json!(2);
    live["rollout"] = json!({"paused": true});
    live["services"]["decode"]["replicas"] = json!(4);
    live["services"]["prefill"]["autoscaling"] = json!({"minReplicas": 1, "maxReplicas": 3});
    live["services"]["prefill"]
        .as_object_mut()
        .expect("prefill")
        .remove("replicas");
    let mut expected = spec();
    expected["revisionHistoryLimit"] = json!(2);
    expected["rollout"] = json!({"paused": true});
    expected["services"]["decode"]["replicas"] = json!(4);
    expected["services"]["prefill"] = json!({"componentType": "worker", "role": "prefill", "args": ["--a"], "autoscaling": {"minReplicas": 1, "maxReplicas": 3}});
    assert_eq!(restore(&live, &stored), expected);
    // Only what differs is sent, removed fields as null.
    assert_eq!(
        merge_patch(&live, &restore(&live, &stored)),
        json!({"image": "rocm/infera:sglang-v0.1.1"})
    );
}

#[test]
fn a_merge_patch_sets_what_changed_and_nulls_what_went() {
    let from = json!({"a": 1, "b": {"c": [1], "d": "x"}, "e": true});
    let to = json!({"a": 1, "b": {"c": [2]}, "f": "new"});
    assert_eq!(
        merge_patch(&from, &to),
        json!({"b": {"c": [2], "d": null}, "e": null, "f": "new"})
    );
    assert_eq!(merge_patch(&to, &to), json!({}));
}

#[test]
fn undo_returns_to_the_revision_before_the_newest_or_the_one_named() {
    assert_eq!(undo_target(&[3, 1, 2], None), Ok(2));
    assert_eq!(undo_target(&[3, 1, 2], Some(1)), Ok(1));
    assert_eq!(
        undo_target(&[3, 2], Some(1)).map_err(|e| e.to_string()),
        Err("revision 1 is not in the history, which has revisions 2, 3; see `kubectl infera rollout history`".into())
    );
    assert_eq!(
        undo_target(&[4], None).map_err(|e| e.to_string()),
        Err("there is no earlier revision to return to: the history has only revision 4".into())
    );
}

#[test]
fn go_json_escapes_what_gos_html_safe_encoder_escapes_and_nothing_else() {
    let value = json!({
        "spec": {"args": ["--ib-device", "<rdma-nic>", "https://h/x?a=1&b=2", "line\u{2028}para\u{2029}"]},
        "näme<": "tab\t\"quote\" back\\slash é 漢字 \u{1F600} /",
    });
    let text = String::from_utf8(to_go_json(&value).expect("encodes")).expect("UTF-8");
    // As Go's json.Marshal writes the same value (its map keys sorted, as serde_json's are).
    assert_eq!(
        text,
        r#"{"näme\u003c":"tab\t\"quote\" back\\slash é 漢字 😀 /","spec":{"args":["--ib-device","\u003crdma-nic\u003e","https://h/x?a=1\u0026b=2","line\u2028para\u2029"]}}"#
    );
    // The same JSON value, and a fixed point: nothing left for the re-encoding to escape.
    assert_eq!(serde_json::from_str::<Value>(&text).expect("parses"), value);
    assert!(!text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']));
}
