//! Prints the InferaDeployment CRD as YAML, generated from the types (`make generate` writes it to
//! `crds/`, which the plugin embeds and `init` applies).

use std::process::ExitCode;

fn main() -> ExitCode {
    match infera_core::crd::crd_yaml() {
        Ok(yaml) => {
            print!("{yaml}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("cannot write the CRD as YAML: {error}");
            ExitCode::FAILURE
        }
    }
}
