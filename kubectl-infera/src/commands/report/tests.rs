use std::io::Read;

use k8s_openapi::jiff::Timestamp;

use super::bundle::Bundle;

/// The entries of a `.tar.gz`: (path, text).
fn entries(bytes: &[u8]) -> Vec<(String, String)> {
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut found = Vec::new();
    for entry in archive.entries().expect("a tar") {
        let mut entry = entry.expect("an entry");
        let path = entry.path().expect("a path").display().to_string();
        let mut text = String::new();
        entry.read_to_string(&mut text).expect("text");
        found.push((path, text));
    }
    found
}

#[test]
fn the_bundle_is_a_tar_gz_under_one_directory_with_a_readme_of_its_files_and_gaps() {
    let mut bundle = Bundle::new("infera-report-team-demo".into());
    bundle.text("status.txt", "State: Ready");
    bundle.yaml("pods.yaml", &serde_json::json!([{"name": "demo-server-0"}]));
    bundle.problem(
        "logs/demo-decode-0/engine.log",
        "forbidden: pods/log".into(),
    );
    let now: Timestamp = "2026-12-06T07:30:00Z".parse().expect("time");
    let bytes = bundle.finish(now).expect("an archive");
    let found = entries(&bytes);
    let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "infera-report-team-demo/README.txt",
            "infera-report-team-demo/status.txt",
            "infera-report-team-demo/pods.yaml",
        ]
    );
    assert_eq!(found[1].1, "State: Ready\n");
    assert_eq!(found[2].1, "- name: demo-server-0\n");
    let readme = &found[0].1;
    assert!(
        readme.starts_with("Infera support report, made 2026-12-06T07:30:00Z by kubectl-infera "),
        "{readme}"
    );
    assert!(
        readme.contains("  status.txt (13 bytes)\n  pods.yaml (22 bytes)\n"),
        "{readme}"
    );
    assert!(
        readme.ends_with(
            "Not in the report:\n  logs/demo-decode-0/engine.log: forbidden: pods/log\n"
        ),
        "{readme}"
    );
}
