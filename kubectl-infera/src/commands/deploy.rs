//! `kubectl infera deploy`: from `-f FILE`, from flags, or from the wizard on a terminal (the
//! [`Source`] is chosen once).
//! Validates client-side first, applies with server-side apply as `kubectl-infera`, and with
//! `--wait` follows the deployment until Ready, explaining on timeout what blocks it.

use std::{collections::BTreeMap, time::Duration};

use infera_core::InferaDeployment;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::{
    Api,
    api::{ListParams, Patch},
};

use crate::{
    apply::{self, Outcome, conflict_or},
    checks,
    cli::{DeployArgs, DryRun, GlobalArgs, ManifestOutput, SpecFlags},
    client::{self, Kube},
    error::{Error, Result},
    plan,
    printer::{Printer, Style},
    spec::{self, Source},
    wait, wizard,
};

pub async fn run(args: &DeployArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let offline = args.dry_run == DryRun::Client;
    let (mut deployments, kube) = deployments(args, global, printer).await?;
    // Client-side validation, with infera-core's messages, before anything is sent.
    for idep in &deployments {
        spec::validate(idep)?;
    }
    // Valid, but each mutable tag may pull different bytes later: one warning per image.
    for idep in &deployments {
        for image in infera_core::validate::mutable_images(idep) {
            printer.warn(&spec::mutable_image_warning(&image));
        }
        if let Some(warning) = spec::gaie_off_warning(idep) {
            printer.warn(&warning);
        }
    }
    for idep in &mut deployments {
        clean(idep);
    }
    if let Some(path) = &args.save {
        let text = infera_core::yaml::to_yaml_stream(&deployments)
            .map_err(|e| Error::serialize("the spec", "YAML", e))?;
        std::fs::write(path, text).map_err(|source| Error::WriteFile {
            path: path.clone(),
            source,
        })?;
        printer.note(&format!("saved the spec to {}", path.display()));
    }
    if offline {
        print_objects(
            printer,
            &deployments,
            args.output.unwrap_or(ManifestOutput::Yaml),
        )?;
        return Ok(());
    }
    // The connection the wizard made, else the first and only one.
    let kube = match kube {
        Some(kube) => kube,
        None => client::connect(global).await?,
    };
    let server_dry_run = args.dry_run == DryRun::Server;
    for idep in &mut deployments {
        if idep.metadata.namespace.is_none() {
            idep.metadata.namespace = Some(kube.namespace.clone());
        }
    }
    // All or nothing: the API server checks every deployment of the file before one is written.
    if !server_dry_run {
        for idep in &deployments {
            apply_deployment(&kube, idep, true, args.force_conflicts).await?;
        }
    }
    let mut applied = Vec::new();
    for idep in &deployments {
        let (object, outcome) =
            apply_deployment(&kube, idep, server_dry_run, args.force_conflicts).await?;
        let suffix = if server_dry_run {
            " (server dry run)"
        } else {
            ""
        };
        if args.output.is_none() {
            printer.out(&format!(
                "inferadeployment.infera.amd.com/{} {outcome}{suffix}",
                object.metadata.name.as_deref().unwrap_or_default()
            ));
        }
        applied.push(object);
    }
    if let Some(output) = args.output {
        print_objects(printer, &applied, output)?;
    }
    if args.wait && !server_dry_run {
        for idep in &applied {
            wait::ready(&kube, idep, args.timeout, printer).await?;
        }
    } else if !server_dry_run
        && args.output.is_none()
        && let Some(idep) = applied.first()
    {
        let name = idep.metadata.name.as_deref().unwrap_or_default();
        let namespace = idep
            .metadata
            .namespace
            .as_deref()
            .unwrap_or(&kube.namespace);
        printer.note(&format!(
            "follow it with `kubectl infera status {name} -n {namespace} --watch`"
        ));
    }
    Ok(())
}

/// The deployments of the [`Source`] the arguments choose, and the cluster connection if making
/// them needed one. The kubeconfig is read once per command: the wizard needs it before asking
/// (defaults from the nodes, the namespace to confirm), and `run` uses that connection; a file or
/// flags need it only once the spec is valid, and `--dry-run=client` not at all.
async fn deployments(
    args: &DeployArgs,
    global: &GlobalArgs,
    printer: &Printer,
) -> Result<(Vec<InferaDeployment>, Option<Kube>)> {
    let namespace = global.namespace.as_deref();
    let can_ask = printer.interactive() && !args.no_interactive;
    match Source::of(args.file.as_deref(), &args.spec, can_ask)? {
        Source::File(path) => Ok((spec::read(path, namespace)?, None)),
        Source::Flags(flags) => Ok((vec![plan::resolve(flags)?.to_deployment(namespace)], None)),
        Source::Wizard(flags) => {
            // With --dry-run=client, the cluster only suggests defaults.
            let kube = match client::connect(global).await {
                Ok(kube) => Some(kube),
                Err(_) if args.dry_run == DryRun::Client => None,
                Err(e) => return Err(e),
            };
            let idep = from_wizard(args, flags, global, kube.as_ref(), printer).await?;
            Ok((vec![idep], kube))
        }
    }
}

/// Drops what must not be applied (server-managed metadata and status).
fn clean(idep: &mut InferaDeployment) {
    idep.status = None;
    let m = &mut idep.metadata;
    m.resource_version = None;
    m.uid = None;
    m.managed_fields = None;
    m.creation_timestamp = None;
    m.generation = None;
}

fn print_objects(
    printer: &Printer,
    objects: &[InferaDeployment],
    output: ManifestOutput,
) -> Result<()> {
    match (output, objects) {
        (ManifestOutput::Json, [one]) => printer.json(one),
        (ManifestOutput::Json, many) => {
            printer.json(&serde_json::json!({"apiVersion": "v1", "kind": "List", "items": many}))
        }
        (ManifestOutput::Yaml, many) => {
            printer.out(
                &infera_core::yaml::to_yaml_stream(many)
                    .map_err(|e| Error::serialize("the InferaDeployments", "YAML", e))?,
            );
            Ok(())
        }
    }
}

/// The wizard source: asks for what the flags do not say, shows the InferaDeployment and the
/// same command without the wizard, and asks before applying it for real. `kube` is there
/// unless `--dry-run=client` could not connect.
async fn from_wizard(
    args: &DeployArgs,
    flags: &SpecFlags,
    global: &GlobalArgs,
    kube: Option<&Kube>,
    printer: &Printer,
) -> Result<InferaDeployment> {
    let hints = match kube {
        Some(kube) => cluster_hints(kube).await,
        None => wizard::ClusterHints::default(),
    };
    let plan = plan::resolve(&wizard::run(flags, &hints, &|line| printer.note(line))?)?;
    let idep = plan.to_deployment(global.namespace.as_deref());
    // The connection it is applied through, if it is (also with --dry-run=server): the
    // equivalent command names its namespace.
    let target = kube.filter(|_| args.dry_run != DryRun::Client);
    let namespace = target.map_or(global.namespace.as_deref(), |k| Some(&k.namespace));
    printer.note(&format!(
        "\n{}",
        printer.paint_err(Style::Bold, "The InferaDeployment:")
    ));
    printer.note(
        &infera_core::yaml::to_yaml(&idep)
            .map_err(|e| Error::serialize("the InferaDeployment", "YAML", e))?,
    );
    printer.note(&format!(
        "{}\n{}\n",
        printer.paint_err(Style::Bold, "The same without the wizard:"),
        plan.command_line(global, namespace)
    ));
    spec::validate(&idep)?;
    if let Some(kube) = target.filter(|_| args.dry_run == DryRun::None && !args.yes)
        && !wizard::confirm(&kube.context, &kube.namespace, &plan.name)?
    {
        return Err(Error::NotConfirmed);
    }
    Ok(idep)
}

/// Defaults for the wizard from one LIST of nodes and one of pods (for the GPUs in use);
/// nothing when the cluster cannot tell, no products when the pods cannot be read.
async fn cluster_hints(kube: &Kube) -> wizard::ClusterHints {
    let lookup = async {
        let nodes: Api<Node> = Api::all(kube.client.clone());
        let nodes = nodes.list(&ListParams::default()).await.ok()?.items;
        let pods: Api<Pod> = Api::all(kube.client.clone());
        let free_per_product = match pods.list(&ListParams::default()).await {
            Ok(pods) => checks::gpu::free_per_product(
                &checks::gpu::gpu_capacity(&nodes, &pods.items),
                plan::DEFAULT_GPU_TYPE,
            ),
            Err(_) => BTreeMap::new(),
        };
        let gpus: Vec<i32> = nodes
            .iter()
            .filter_map(|n| {
                n.status
                    .as_ref()?
                    .allocatable
                    .as_ref()?
                    .get(plan::DEFAULT_GPU_TYPE)?
                    .0
                    .parse()
                    .ok()
            })
            .filter(|g: &i32| *g > 0)
            .collect();
        let mut rdma_per_resource = BTreeMap::new();
        let allocatable = nodes
            .iter()
            .filter_map(|n| n.status.as_ref()?.allocatable.as_ref())
            .flatten();
        for (resource, quantity) in allocatable {
            let count = quantity.0.parse::<i64>().unwrap_or(0);
            if wizard::is_rdma_resource(resource) && count > 0 {
                *rdma_per_resource.entry(resource.clone()).or_insert(0) += count;
            }
        }
        Some(wizard::ClusterHints {
            gpus_per_node: gpus.iter().max().copied(),
            gpu_nodes: gpus.len(),
            free_per_product,
            rdma_per_resource,
        })
    };
    tokio::time::timeout(Duration::from_secs(5), lookup)
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}

async fn apply_deployment(
    kube: &Kube,
    idep: &InferaDeployment,
    dry_run: bool,
    force: bool,
) -> Result<(InferaDeployment, Outcome)> {
    let namespace = idep
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| kube.namespace.clone());
    let name = idep.metadata.name.clone().unwrap_or_default();
    let api: Api<InferaDeployment> = Api::namespaced(kube.client.clone(), &namespace);
    let display = format!("InferaDeployment {namespace}/{name}");
    let previous = match api.get_opt(&name).await {
        Ok(p) => p,
        Err(kube::Error::Api(s)) if s.code == 404 => {
            return Err(Error::NotInstalled { detail: s.message });
        }
        Err(e) => return Err(Error::kube(format!("reading {display}"), e)),
    };
    let applied = api
        .patch(&name, &apply::params(dry_run, force), &Patch::Apply(idep))
        .await
        .map_err(|e| conflict_or(&display, e))?;
    let outcome = apply::outcome(previous.as_ref().map(|p| &p.metadata), &applied.metadata);
    Ok((applied, outcome))
}
