//! `completion SHELL`, the hidden `__complete` that kubectl's plugin completion calls through the
//! `kubectl_complete-infera` shim, and `--install-shim`.

use std::{fmt::Debug, path::PathBuf, time::Duration};

use clap::{CommandFactory, builder::PossibleValue};
use infera_core::InferaDeployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::{Api, api::ListParams};
use serde::de::DeserializeOwned;

use crate::{
    cli::{Cli, CompleteArgs, CompletionArgs, GlobalArgs},
    client,
    commands::{bench, logs},
    completions::{SHIM, SHIM_NAME, script},
    error::{Error, Result},
    printer::Printer,
};

pub fn run(args: &CompletionArgs, printer: &Printer) -> Result<()> {
    if let Some(dir) = &args.install_shim {
        let dir = if dir.as_os_str().is_empty() {
            default_shim_dir()?
        } else {
            dir.clone()
        };
        let path = dir.join(SHIM_NAME);
        std::fs::create_dir_all(&dir).map_err(|source| Error::WriteFile {
            path: dir.clone(),
            source,
        })?;
        std::fs::write(&path, SHIM).map_err(|source| Error::WriteFile {
            path: path.clone(),
            source,
        })?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(
                |source| Error::WriteFile {
                    path: path.clone(),
                    source,
                },
            )?;
        }
        printer.note(&format!(
            "wrote {}; `kubectl infera <TAB>` now completes (kubectl >= 1.26)",
            path.display()
        ));
    }
    if let Some(shell) = args.shell {
        printer.out(&script(shell));
    }
    Ok(())
}

/// Where the shim goes by default: Krew's bin directory — `$KREW_ROOT/bin`, else the directory of
/// Krew's own `kubectl-krew` found on PATH (with `which`, as kubectl finds plugins), else
/// `~/.krew/bin` — which is on PATH next to the `kubectl-infera` Krew installed.
fn default_shim_dir() -> Result<PathBuf> {
    if let Some(root) = std::env::var_os("KREW_ROOT").filter(|r| !r.is_empty()) {
        return Ok(PathBuf::from(root).join("bin"));
    }
    if let Some(dir) = which::which("kubectl-krew")
        .ok()
        .and_then(|krew| krew.parent().map(PathBuf::from))
    {
        return Ok(dir);
    }
    std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".krew").join("bin"))
        .ok_or_else(|| Error::Usage("HOME is not set; pass a directory: --install-shim DIR".into()))
}

/// Cobra's shell-completion directives, which kubectl understands.
const NO_FILE: u8 = 4;
const FILES: u8 = 0;

/// Static candidates for the words typed so far: `(candidates, directive)`. `None` means the last
/// word is a value that needs the cluster (deployment or namespace names).
pub fn candidates(words: &[String]) -> (Vec<String>, u8, Option<Dynamic>) {
    let root = Cli::command();
    let (current, before) = match words.split_last() {
        Some((last, rest)) => (last.as_str(), rest),
        None => ("", &[][..]),
    };
    // Walk into the subcommand; `after` are the words typed after it.
    let mut command = &root;
    let mut after = before;
    for (i, word) in before.iter().enumerate() {
        if let Some(sub) = command.find_subcommand(word) {
            command = sub;
            after = &before[i + 1..];
        }
    }
    let previous = before.last().map(String::as_str).unwrap_or_default();
    let all_args: Vec<&clap::Arg> = command
        .get_arguments()
        .chain(root.get_arguments())
        .collect();
    if let Some(value) = flag_value(previous, current, &all_args) {
        return value;
    }
    if current.starts_with('-') {
        let flags = all_args
            .iter()
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| {
                a.get_long()
                    .map(|l| (format!("--{l}"), a.get_help().map(|h| h.to_string())))
            })
            .filter(|(f, _)| f.starts_with(current))
            .map(|(f, help)| match help {
                Some(h) => format!("{f}\t{h}"),
                None => f,
            })
            .collect();
        return (flags, NO_FILE, None);
    }
    // What the next positional is: a deployment's name, a `bench` run's, or (the last positional
    // taking many) one more of `logs`'s pools of the deployment typed first.
    let typed = positionals(after, &all_args);
    let declared: Vec<&clap::Arg> = command.get_positionals().collect();
    let next = declared.get(typed.len()).or_else(|| {
        declared.last().filter(|arg| {
            typed.len() >= declared.len() && arg.get_num_args().is_some_and(|n| n.max_values() > 1)
        })
    });
    let dynamic = match next.map(|arg| arg.get_id().as_str()) {
        Some("name") => Some(Dynamic::Deployments),
        Some("run" | "before" | "after") => Some(Dynamic::Runs),
        Some("pools") if command.get_name() == "logs" => {
            typed.first().map(|name| Dynamic::Pools((*name).clone()))
        }
        _ => None,
    };
    if command.has_subcommands() && typed.is_empty() {
        let subs = command
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name().starts_with(current))
            .map(|s| match s.get_about() {
                Some(about) => format!("{}\t{about}", s.get_name()),
                None => s.get_name().to_string(),
            })
            .collect();
        return (subs, NO_FILE, dynamic);
    }
    if dynamic.is_some() {
        return (vec![], NO_FILE, dynamic);
    }
    if command.get_name() == "completion" {
        let shells = ["bash", "zsh", "fish", "powershell"]
            .iter()
            .filter(|s| s.starts_with(current))
            .map(|s| s.to_string());
        return (shells.collect(), NO_FILE, None);
    }
    (vec![], NO_FILE, None)
}

/// The candidates for the value of the flag `previous` (among `args`) whose typing began as
/// `current`; `None` when `previous` is no flag that takes a value.
fn flag_value(
    previous: &str,
    current: &str,
    args: &[&clap::Arg],
) -> Option<(Vec<String>, u8, Option<Dynamic>)> {
    if !previous.starts_with('-') || previous.contains('=') {
        return None;
    }
    let arg = args.iter().find(|a| {
        a.get_long().is_some_and(|l| previous == format!("--{l}"))
            || a.get_short().is_some_and(|s| previous == format!("-{s}"))
    })?;
    if !arg.get_action().takes_values() {
        return None;
    }
    let id = arg.get_id().as_str();
    if id == "namespace" {
        return Some((vec![], NO_FILE, Some(Dynamic::Namespaces)));
    }
    if matches!(id, "file" | "kubeconfig" | "save" | "for_file") {
        return Some((vec![], FILES, None));
    }
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(PossibleValue::get_name)
        .filter(|v| v.starts_with(current))
        .map(String::from)
        .collect();
    Some((values, NO_FILE, None))
}

/// The positional words among `words`: not flags, nor the values of flags that take one.
fn positionals<'a>(words: &'a [String], args: &[&clap::Arg]) -> Vec<&'a String> {
    let takes_value = |flag: &str| {
        args.iter().any(|a| {
            a.get_action().takes_values()
                && (a.get_long().is_some_and(|l| flag == format!("--{l}"))
                    || a.get_short().is_some_and(|s| flag == format!("-{s}")))
        })
    };
    let mut found = Vec::new();
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if !word.starts_with('-') {
            found.push(word);
        } else if !word.contains('=') && takes_value(word) {
            words.next();
        }
    }
    found
}

/// Completions that need the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dynamic {
    Namespaces,
    Deployments,
    /// `bench` runs (their ConfigMaps).
    Runs,
    /// The pools `logs` takes of this deployment.
    Pools(String),
}

/// The global flags among the words typed so far (`-n team-a`, `--context=prod`…), so dynamic
/// completion looks where the finished command will.
pub fn globals_in(words: &[String], base: &GlobalArgs) -> GlobalArgs {
    let mut global = base.clone();
    let typed = words
        .split_last()
        .map(|(_, before)| before)
        .unwrap_or_default();
    let mut iter = typed.iter().peekable();
    while let Some(word) = iter.next() {
        let (flag, inline) = match word.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (word.as_str(), None),
        };
        let slot: Option<&mut Option<String>> = match flag {
            "-n" | "--namespace" => Some(&mut global.namespace),
            "--context" => Some(&mut global.context),
            "--cluster" => Some(&mut global.cluster),
            "--user" => Some(&mut global.user),
            "--as" => Some(&mut global.as_user),
            _ => None,
        };
        if let Some(slot) = slot {
            *slot = inline.or_else(|| iter.next().cloned());
        } else if flag == "--kubeconfig" {
            global.kubeconfig = inline.or_else(|| iter.next().cloned()).map(PathBuf::from);
        }
    }
    global
}

pub async fn complete(args: &CompleteArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let global = &globals_in(&args.words, global);
    let (mut lines, directive, dynamic) = candidates(&args.words);
    let current = args.words.last().cloned().unwrap_or_default();
    if let Some(dynamic) = dynamic {
        let lookup = async {
            let kube = client::connect(global).await.ok()?;
            match dynamic {
                Dynamic::Namespaces => names(Api::<Namespace>::all(kube.client), "").await,
                Dynamic::Deployments => {
                    names(
                        Api::<InferaDeployment>::namespaced(kube.client, &kube.namespace),
                        "",
                    )
                    .await
                }
                Dynamic::Runs => {
                    let api = Api::<ConfigMap>::namespaced(kube.client, &kube.namespace);
                    names(api, &bench::runs_selector(None)).await
                }
                Dynamic::Pools(name) => {
                    let api = Api::<InferaDeployment>::namespaced(kube.client, &kube.namespace);
                    Some(logs::pools(&api.get_opt(&name).await.ok()??))
                }
            }
        };
        let names = tokio::time::timeout(Duration::from_secs(3), lookup)
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        lines.extend(names.into_iter().filter(|n| n.starts_with(&current)));
    }
    lines.push(format!(":{directive}"));
    printer.out(&lines.join("\n"));
    Ok(())
}

/// The names of every object `api` lists with the label `selector` (metadata only).
async fn names<K: Clone + DeserializeOwned + Debug>(
    api: Api<K>,
    selector: &str,
) -> Option<Vec<String>> {
    let list = api
        .list_metadata(&ListParams::default().labels(selector))
        .await
        .ok()?;
    Some(
        list.items
            .into_iter()
            .filter_map(|o| o.metadata.name)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn completes_subcommands_flags_and_values() {
        let (c, d, _) = candidates(&words(&["st"]));
        assert_eq!(
            c,
            ["status\tShow InferaDeployments: a list, or one in detail"]
        );
        assert_eq!(d, NO_FILE);
        let (c, _, _) = candidates(&words(&["status", "--wat"]));
        assert_eq!(c.len(), 1);
        assert!(c[0].starts_with("--watch\t"));
        let (c, _, _) = candidates(&words(&["status", "-o", ""]));
        assert_eq!(c, ["table", "wide", "json", "yaml"]);
        let (_, d, _) = candidates(&words(&["render", "-f", ""]));
        assert_eq!(d, FILES);
        let (_, _, dynamic) = candidates(&words(&["status", ""]));
        assert_eq!(dynamic, Some(Dynamic::Deployments));
        let (_, _, dynamic) = candidates(&words(&["status", "-n", ""]));
        assert_eq!(dynamic, Some(Dynamic::Namespaces));
    }

    #[test]
    fn bench_completes_its_subcommands_with_deployments_then_runs() {
        let (c, _, dynamic) = candidates(&words(&["bench", ""]));
        let subs: Vec<&str> = c.iter().filter_map(|c| c.split('\t').next()).collect();
        assert_eq!(
            (subs, dynamic),
            (vec!["list", "show", "compare"], Some(Dynamic::Deployments))
        );
        let (c, _, dynamic) = candidates(&words(&["bench", "demo", ""]));
        assert_eq!((c, dynamic), (vec![], None));
        let (_, _, dynamic) = candidates(&words(&["bench", "show", ""]));
        assert_eq!(dynamic, Some(Dynamic::Runs));
        let (_, _, dynamic) = candidates(&words(&["bench", "compare", "a-bench-1", ""]));
        assert_eq!(dynamic, Some(Dynamic::Runs));
        let (_, _, dynamic) = candidates(&words(&["bench", "compare", "a", "b", ""]));
        assert_eq!(dynamic, None);
        let (_, _, dynamic) = candidates(&words(&["bench", "list", ""]));
        assert_eq!(dynamic, Some(Dynamic::Deployments));
    }

    #[test]
    fn logs_completes_a_deployment_then_its_pools_as_many_as_typed() {
        let (_, _, dynamic) = candidates(&words(&["logs", ""]));
        assert_eq!(dynamic, Some(Dynamic::Deployments));
        let pools = Some(Dynamic::Pools("demo".into()));
        let (_, _, dynamic) = candidates(&words(&["logs", "demo", ""]));
        assert_eq!(dynamic, pools);
        let (_, _, dynamic) = candidates(&words(&["logs", "demo", "decode", "-f", "pre"]));
        assert_eq!(dynamic, pools);
        let (_, _, dynamic) = candidates(&words(&["logs", "--since", "5m", "demo", ""]));
        assert_eq!(dynamic, pools);
        // Other commands' last positionals take one value and complete nothing more.
        let (_, _, dynamic) = candidates(&words(&["status", "demo", ""]));
        assert_eq!(dynamic, None);
    }

    #[test]
    fn rollout_completes_its_subcommands_then_a_deployment_once() {
        let (c, _, _) = candidates(&words(&["rollout", "h"]));
        assert_eq!(c.len(), 1);
        assert!(c[0].starts_with("history\t"), "{c:?}");
        let (c, _, _) = candidates(&words(&["rollout", ""]));
        let names: Vec<&str> = c.iter().filter_map(|c| c.split('\t').next()).collect();
        assert_eq!(names, ["pause", "resume", "status", "history", "undo"]);
        for sub in ["pause", "resume", "status", "history", "undo"] {
            let (_, _, dynamic) = candidates(&words(&["rollout", sub, ""]));
            assert_eq!(dynamic, Some(Dynamic::Deployments), "rollout {sub}");
        }
        let (_, _, dynamic) = candidates(&words(&["rollout", "undo", "-n", "team", ""]));
        assert_eq!(dynamic, Some(Dynamic::Deployments));
        let (_, _, dynamic) = candidates(&words(&["rollout", "undo", "demo", ""]));
        assert_eq!(dynamic, None);
        let (_, _, dynamic) = candidates(&words(&["scale", ""]));
        assert_eq!(dynamic, Some(Dynamic::Deployments));
        let (_, _, dynamic) = candidates(&words(&["scale", "demo", ""]));
        assert_eq!(dynamic, None);
    }

    #[test]
    fn dynamic_completion_honours_typed_global_flags() {
        let g = globals_in(
            &words(&["status", "-n", "team-a", "--context=prod", ""]),
            &GlobalArgs::default(),
        );
        assert_eq!(g.namespace.as_deref(), Some("team-a"));
        assert_eq!(g.context.as_deref(), Some("prod"));
        // The word being completed is not a value yet.
        let g = globals_in(&words(&["status", "-n"]), &GlobalArgs::default());
        assert_eq!(g.namespace, None);
    }

    #[test]
    fn hidden_commands_are_not_offered() {
        let (c, _, _) = candidates(&words(&["__"]));
        assert!(c.is_empty(), "{c:?}");
    }
}
