use super::{check_selection, tail_lines};
use crate::error::Error;

#[test]
fn tail_is_ten_lines_unless_given_or_since_is() {
    assert_eq!(tail_lines(None, false), Some(10));
    assert_eq!(tail_lines(None, true), None);
    assert_eq!(tail_lines(Some(-1), false), None);
    assert_eq!(tail_lines(Some(50), true), Some(50));
}

fn deployment(yaml: &str) -> infera_core::InferaDeployment {
    serde_saphyr::from_str(yaml).expect("a deployment")
}

#[test]
fn pools_and_ranks_are_checked_against_the_spec_with_what_there_is() {
    let group = deployment(
        r#"
apiVersion: infera.amd.com/v1alpha1
kind: InferaDeployment
metadata: {name: group, namespace: team}
spec:
  backendFramework: sglang
  services:
    server: {componentType: server}
    worker: {componentType: worker, numberOfNodes: 2}
"#,
    );
    let usage = |result: Result<(), Error>| match result {
        Err(Error::Usage(message)) => message,
        other => panic!("not a usage error: {other:?}"),
    };
    assert!(check_selection(&group, &["worker".into(), "nats".into()], Some(1)).is_ok());
    let unknown = check_selection(&group, &["decode".into(), "worker".into()], None);
    assert_eq!(
        unknown.map_err(|e| e.to_string()),
        Err("InferaDeployment team/group has no pool decode; its pools are server, worker, nats, epp, model".into())
    );
    assert_eq!(
        usage(check_selection(&group, &[], Some(2))),
        "--rank 2: the multi-node pools of group have ranks 0 to 1"
    );
    assert_eq!(
        usage(check_selection(&group, &["server".into()], Some(0))),
        "--rank 0: none of server spans nodes (numberOfNodes > 1)"
    );
}
