//! Parallelism: tensor × pipeline parallelism, when `args` set either, uses exactly the GPUs of one
//! replica (`resources.gpu × numberOfNodes`). CEL cannot express this rule; the operator reports
//! it as `InvalidSpec`.

use super::Errors;
use crate::flags::{PIPELINE_PARALLEL, TENSOR_PARALLEL};

/// Reports parallelism flags of the service at `path` without a positive integer value, or whose
/// product is not `gpus`.
pub(super) fn parallelism(errors: &mut Errors, path: &str, args: &[String], gpus: i32) {
    let mut product: i64 = 1;
    let mut named = Vec::new();
    for group in [&TENSOR_PARALLEL[..], &PIPELINE_PARALLEL[..]] {
        let Some((i, flag, value)) = find_flag(args, group) else {
            continue;
        };
        match value
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|v| *v >= 1)
        {
            Some(v) => {
                product = product.saturating_mul(v);
                named.push(format!("{flag} {v}"));
            }
            None => errors.push(
                format!("{path}.args[{i}]"),
                format!("{flag} needs a positive integer value; fix it"),
            ),
        }
    }
    if !named.is_empty() && product != i64::from(gpus) {
        errors.push(
            format!("{path}.args"),
            format!(
                "{} uses {product} GPUs but resources.gpu × numberOfNodes is {gpus}; make the parallelism flags multiply to {gpus} or change resources.gpu / numberOfNodes",
                named.join(" × ")
            ),
        );
    }
}

/// Position, spelling and value of the first flag of `names` in `args` (`--tp 2` or `--tp=2`).
fn find_flag<'a>(args: &'a [String], names: &[&str]) -> Option<(usize, &'a str, Option<&'a str>)> {
    args.iter()
        .enumerate()
        .find_map(|(i, arg)| match arg.split_once('=') {
            Some((flag, value)) if names.contains(&flag) => Some((i, flag, Some(value))),
            None if names.contains(&arg.as_str()) => {
                Some((i, arg.as_str(), args.get(i + 1).map(String::as_str)))
            }
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::{super::found, *};

    fn errors_of(args: &[&str], gpus: i32) -> Vec<String> {
        let args: Vec<String> = args.iter().map(ToString::to_string).collect();
        found(|e| parallelism(e, "spec.services.decode", &args, gpus))
    }

    #[test]
    fn no_parallelism_flags_use_any_number_of_gpus() {
        assert!(errors_of(&["--model-path", "m"], 8).is_empty());
    }

    #[test]
    fn matching_flags_pass_in_every_spelling() {
        assert!(errors_of(&["--tp-size", "8"], 8).is_empty());
        assert!(errors_of(&["--tp=4", "-pp", "2"], 8).is_empty());
        assert!(
            errors_of(
                &[
                    "--tensor-parallel-size",
                    "8",
                    "--pipeline-parallel-size",
                    "2"
                ],
                16
            )
            .is_empty()
        );
    }

    #[test]
    fn a_product_that_is_not_the_gpus_of_a_replica() {
        assert_eq!(
            errors_of(&["--tp-size", "2"], 1),
            [
                "spec.services.decode.args: --tp-size 2 uses 2 GPUs but resources.gpu × numberOfNodes is 1; make the parallelism flags multiply to 1 or change resources.gpu / numberOfNodes"
            ]
        );
        assert_eq!(
            errors_of(
                &[
                    "--tensor-parallel-size",
                    "8",
                    "--pipeline-parallel-size",
                    "4"
                ],
                16
            ),
            [
                "spec.services.decode.args: --tensor-parallel-size 8 × --pipeline-parallel-size 4 uses 32 GPUs but resources.gpu × numberOfNodes is 16; make the parallelism flags multiply to 16 or change resources.gpu / numberOfNodes"
            ]
        );
    }

    #[test]
    fn a_flag_without_a_positive_integer() {
        for args in [&["--tp-size=two"][..], &["--tp-size", "0"], &["--tp-size"]] {
            assert_eq!(
                errors_of(args, 1),
                ["spec.services.decode.args[0]: --tp-size needs a positive integer value; fix it"],
                "{args:?}"
            );
        }
    }
}
