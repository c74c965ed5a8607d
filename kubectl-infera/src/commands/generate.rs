//! Hidden `__generate ROOT`: writes the generated files of the repository that come from the
//! plugin (`make generate`): the shell completions and the operator's Helm chart. The CRD, which
//! both embed, comes first from the types (`cargo run -p infera-core --example crd`).

use std::path::{Path, PathBuf};

use crate::{
    chart,
    cli::{GenerateArgs, Shell},
    completions,
    error::{Error, Result},
    printer::Printer,
};

/// Relative path and content of every generated file.
pub fn files() -> Result<Vec<(PathBuf, String)>> {
    let mut files = Vec::new();
    for (shell, file) in [
        (Shell::Bash, "kubectl-infera.bash"),
        (Shell::Zsh, "_kubectl-infera"),
        (Shell::Fish, "kubectl-infera.fish"),
        (Shell::Powershell, "kubectl-infera.ps1"),
    ] {
        files.push((
            Path::new("completions").join(file),
            completions::script(shell),
        ));
    }
    files.push((
        Path::new("completions").join(completions::SHIM_NAME),
        completions::SHIM.to_string(),
    ));
    files.extend(chart::files()?);
    Ok(files)
}

pub fn run(args: &GenerateArgs, printer: &Printer) -> Result<()> {
    for (relative, content) in files()? {
        let path = args.root.join(&relative);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| Error::WriteFile {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let unchanged = std::fs::read_to_string(&path).is_ok_and(|old| old == content);
        if !unchanged {
            std::fs::write(&path, &content).map_err(|source| Error::WriteFile {
                path: path.clone(),
                source,
            })?;
            printer.note(&format!("wrote {}", relative.display()));
        }
        #[cfg(unix)]
        if relative.ends_with(completions::SHIM_NAME) {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(
                |source| Error::WriteFile {
                    path: path.clone(),
                    source,
                },
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same check as `make verify`, in `cargo test`: committed generated files are current.
    #[test]
    fn committed_generated_files_are_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = files().expect("generating the files");
        assert!(!files.is_empty(), "nothing was generated");
        // The embedded CRD, from the types.
        files.push((
            PathBuf::from("crds/inferadeployments.infera.amd.com.yaml"),
            infera_core::crd::crd_yaml().expect("the CRD as YAML"),
        ));
        for (relative, content) in files {
            let committed = std::fs::read_to_string(root.join(&relative))
                .unwrap_or_else(|e| panic!("{}: {e}; run `make generate`", relative.display()));
            assert!(
                committed == content,
                "{} is stale: run `make generate`",
                relative.display()
            );
        }
    }
}
