//! The shell completion scripts for `kubectl-infera` and the `kubectl_complete-infera` shim:
//! printed by `completion`, installed by `completion --install-shim` and committed under
//! `completions/` by `__generate`.

use clap::CommandFactory;

use crate::cli::{Cli, Shell};

/// The shim kubectl (≥ 1.26) runs to complete `kubectl infera …`; it must be on PATH.
pub const SHIM: &str = "#!/bin/sh\n# kubectl runs this to complete `kubectl infera ...` (kubectl >= 1.26).\n# Install: put it on PATH next to kubectl-infera, or run `kubectl infera completion --install-shim`.\nexec kubectl-infera __complete \"$@\"\n";
pub const SHIM_NAME: &str = "kubectl_complete-infera";

/// The completion script for a shell, for the binary `kubectl-infera`.
pub fn script(shell: Shell) -> String {
    let mut command = Cli::command();
    let mut out = Vec::new();
    let name = "kubectl-infera";
    match shell {
        Shell::Bash => {
            clap_complete::generate(clap_complete::Shell::Bash, &mut command, name, &mut out)
        }
        Shell::Zsh => {
            clap_complete::generate(clap_complete::Shell::Zsh, &mut command, name, &mut out)
        }
        Shell::Fish => {
            clap_complete::generate(clap_complete::Shell::Fish, &mut command, name, &mut out)
        }
        Shell::Powershell => {
            clap_complete::generate(
                clap_complete::Shell::PowerShell,
                &mut command,
                name,
                &mut out,
            );
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
