//! `kubectl infera bench NAME`: measures a deployment with an in-cluster inference-perf Job and
//! keeps each run (a ConfigMap owned by the deployment); `bench list`, `bench show RUN` and
//! `bench compare RUN RUN` read them back. See docs/bench.md.
//!
//! A run is written all or nothing: both objects are dry-run first, then the ConfigMap and the
//! Job are applied; a Job refused after its ConfigMap was written takes the ConfigMap back.

mod render;
mod summary;
#[cfg(test)]
mod tests;

use std::{collections::BTreeMap, time::Duration};

use futures::StreamExt;
use infera_core::{ComponentType, InferaDeployment};
use k8s_openapi::{
    api::{
        batch::v1::Job,
        core::v1::{ConfigMap, Pod, Service},
    },
    jiff::Timestamp,
};
use kube::{
    Api, ResourceExt,
    api::{DeleteParams, DynamicObject, ListParams, LogParams},
    core::ApiResource,
};
use serde::Serialize;

use render::{APP, CONFIG_KEY, LOAD_KEY, SUMMARY_KEY};
pub use render::{Load, Shape};
use summary::Figures;

use crate::{
    apply,
    cli::{BenchAction, BenchArgs, BenchLoad, BenchTarget, GlobalArgs, Output},
    client::{self, Kube},
    duration::{age, human},
    error::{Error, Result, kube_message},
    gateway_api,
    pod_logs::redact,
    printer::{Cell, Printer, columns},
    view, watch,
};

/// Sent at `--rate` when neither a rate nor a concurrency is given, for this long.
const DEFAULT_RATE: f64 = 2.0;
const DEFAULT_SECONDS: u64 = 60;
/// `--requests` per request in flight when only `--concurrency` is given.
const REQUESTS_PER_SLOT: u32 = 10;
/// Time on top of the sending for the image, the tokenizer and the report.
const SLACK: Duration = Duration::from_secs(600);
/// Lines of a failed run's log shown.
const FAILED_LINES: usize = 20;

pub async fn run(args: &BenchArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    match &args.action {
        Some(BenchAction::List { name, output }) => {
            list(name.as_deref(), *output, global, printer).await
        }
        Some(BenchAction::Show { run, output }) => {
            let kube = client::connect(global).await?;
            let view = collect(&kube, &read_run(&kube, run).await?).await?;
            print_run(printer, &view, *output)
        }
        Some(BenchAction::Compare {
            before,
            after,
            output,
        }) => compare(before, after, *output, global, printer).await,
        None => {
            let name = args.name.as_deref().ok_or_else(|| {
                Error::Usage(
                    "name the InferaDeployment to measure, e.g. `kubectl infera bench demo`".into(),
                )
            })?;
            start(name, args, global, printer).await
        }
    }
}

/// What `bench` prints of a run and keeps of it.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    pub run: String,
    pub deployment: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<Timestamp>,
    pub state: State,
    pub load: Load,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
    /// Why a run failed or was lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The Job's pod has not started (scheduling, pulling the image).
    Pending,
    Running,
    Succeeded,
    Failed,
    /// The Job is gone and its summary was never collected.
    Lost,
}

/// Prompts in groups of 10 × 10 by default.
const DEFAULT_GROUPS: u32 = 10;
const DEFAULT_PROMPTS_PER_GROUP: u32 = 10;

/// The shared prefix of the prompts from the flags, checked before anything is sent: each prompt
/// is its group's prefix and a question of its own, so the prefix is shorter than a prompt.
pub fn shared_prefix(load: &BenchLoad) -> Result<Option<render::SharedPrefix>> {
    let Some(tokens) = load.shared_prefix else {
        return Ok(None);
    };
    if tokens >= load.input_tokens {
        return Err(Error::Usage(format!(
            "--shared-prefix {tokens} must be below --input-tokens {}: each prompt is its group's prefix and a question of its own, e.g. --input-tokens {} --shared-prefix {tokens}",
            load.input_tokens,
            tokens.saturating_mul(2)
        )));
    }
    Ok(Some(render::SharedPrefix {
        tokens,
        groups: load.prefix_groups.unwrap_or(DEFAULT_GROUPS),
        prompts_per_group: load.prompts_per_group.unwrap_or(DEFAULT_PROMPTS_PER_GROUP),
    }))
}

/// The shape of the load from the flags, checked before anything is sent.
pub fn shape(load: &BenchLoad) -> Result<Shape> {
    if let Some(concurrency) = load.concurrency {
        let requests = load
            .requests
            .unwrap_or(concurrency.saturating_mul(REQUESTS_PER_SLOT));
        return Ok(Shape::Concurrency {
            concurrency,
            requests,
        });
    }
    let rate = load.rate.unwrap_or(DEFAULT_RATE);
    if !(rate.is_finite() && rate > 0.0 && rate <= 100_000.0) {
        return Err(Error::Usage(format!(
            "--rate {rate}: give requests per second above 0 and at most 100000, e.g. --rate 2"
        )));
    }
    let seconds = load.duration.map_or(DEFAULT_SECONDS, |d| {
        d.as_secs() + u64::from(d.subsec_nanos() > 0)
    });
    if seconds == 0 {
        return Err(Error::Usage(
            "--duration must be at least 1s, e.g. --duration 60s".into(),
        ));
    }
    Ok(Shape::Rate { rate, seconds })
}

/// A latency target in seconds, refused when zero.
fn target(flag: &str, value: Option<Duration>) -> Result<Option<f64>> {
    match value {
        Some(d) if d.is_zero() => Err(Error::Usage(format!(
            "{flag} must be above 0, e.g. {flag} 500ms"
        ))),
        other => Ok(other.map(|d| d.as_secs_f64())),
    }
}

/// Where the load goes and what it is: `--url`, else `--target` (by default the Gateway of a
/// GAIE deployment, else the server Service) — the base URL, the `Host` its requests carry, and
/// how the run names it.
async fn destination(
    kube: &Kube,
    idep: &InferaDeployment,
    flags: &BenchLoad,
) -> Result<(String, Option<String>)> {
    if let Some(url) = &flags.url {
        return Ok((url.trim_end_matches('/').to_string(), None));
    }
    let gaie = idep.spec.gaie.as_ref().filter(|g| g.is_enabled());
    match (flags.target, gaie) {
        (Some(BenchTarget::Gateway), None) => Err(Error::Refused(format!(
            "--target gateway: InferaDeployment {}/{} has no spec.gaie; use --target server or --url",
            kube.namespace,
            idep.name_any()
        ))),
        (Some(BenchTarget::Gateway) | None, Some(gaie)) => {
            let namespace = gaie.gateway_namespace.as_deref().unwrap_or(&kube.namespace);
            let name = &gaie.gateway_name;
            let api: Api<DynamicObject> = Api::namespaced_with(
                kube.client.clone(),
                namespace,
                &gateway_api::gateway_resource(),
            );
            let what = format!("Gateway {namespace}/{name} (spec.gaie.gatewayName)");
            let object = api
                .get_opt(name)
                .await
                .map_err(|e| Error::kube(format!("reading {what}"), e))?
                .ok_or_else(|| {
                    Error::Refused(format!(
                        "{what} does not exist; create it, or send to the server with --target server"
                    ))
                })?;
            let gateway: gateway_api::Gateway = serde_json::from_value(object.data)
                .map_err(|e| Error::Refused(format!("unexpected {what}: {e}")))?;
            let door = gateway
                .front_door(gaie.gateway_section_name.as_deref(), &gaie.hostnames)
                .map_err(|why| {
                    Error::Refused(format!(
                        "{what} {why}; give --url, or send to the server with --target server"
                    ))
                })?;
            Ok((door.url, door.host))
        }
        (Some(BenchTarget::Server) | None, _) => Ok((server_url(kube, idep).await?, None)),
    }
}

/// The base URL of the deployment's server: its Service's `http` port, by DNS name.
async fn server_url(kube: &Kube, idep: &InferaDeployment) -> Result<String> {
    let name = idep.name_any();
    let namespace = &kube.namespace;
    let Some((service, _)) = idep
        .spec
        .services
        .iter()
        .find(|(_, s)| s.component_type == ComponentType::Server)
    else {
        return Err(Error::Usage(format!(
            "InferaDeployment {namespace}/{name} has no server service to send to; give --url, e.g. its Gateway's address"
        )));
    };
    let object = infera_core::naming::Component::Server(service).object_name(&name);
    let api: Api<Service> = Api::namespaced(kube.client.clone(), namespace);
    let found = api
        .get_opt(&object)
        .await
        .map_err(|e| Error::kube(format!("reading Service {namespace}/{object}"), e))?
        .ok_or_else(|| {
            Error::Refused(format!(
                "Service {namespace}/{object} does not exist yet; wait for the deployment (`kubectl infera status {name}`)"
            ))
        })?;
    let ports = found.spec.and_then(|s| s.ports).unwrap_or_default();
    let port = ports
        .iter()
        .find(|p| p.name.as_deref() == Some(infera_core::naming::HTTP_PORT))
        .or(ports.first())
        .map(|p| p.port)
        .ok_or_else(|| Error::Refused(format!("Service {namespace}/{object} has no port")))?;
    Ok(format!(
        "http://{}:{port}",
        infera_core::naming::service_host(&object, namespace)
    ))
}

/// A run: the load from the flags (checked before anything is sent), its objects written all or
/// nothing, then followed until it has finished and its figures printed.
async fn start(name: &str, args: &BenchArgs, global: &GlobalArgs, printer: &Printer) -> Result<()> {
    let flags = &args.load;
    let shape = shape(flags)?;
    let shared_prefix = shared_prefix(flags)?;
    let slo_ttft_seconds = target("--slo-ttft", flags.slo_ttft)?;
    let slo_itl_seconds = target("--slo-itl", flags.slo_itl)?;
    if let Some(url) = &flags.url
        && !(url.starts_with("http://") || url.starts_with("https://"))
    {
        return Err(Error::Usage(format!(
            "--url {url}: give a URL with its scheme, e.g. http://gateway.example:80"
        )));
    }
    let kube = client::connect(global).await?;
    let idep = view::deployment(&kube, &kube.namespace, name).await?;
    let (url, host) = destination(&kube, &idep, flags).await?;
    let backend = serde_json::to_value(idep.spec.backend_framework)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let load = Load {
        url,
        host,
        backend,
        model: flags.model.clone(),
        tokenizer: flags.tokenizer.clone(),
        input_tokens: flags.input_tokens,
        output_tokens: flags.output_tokens,
        shared_prefix,
        shape,
        slo_ttft_seconds,
        slo_itl_seconds,
        workers: flags.workers,
    };
    let wait = args
        .timeout
        .unwrap_or_else(|| SLACK + Duration::from_secs(shape.seconds().unwrap_or(0)));
    let image = flags.image.as_deref().unwrap_or(render::IMAGE);
    let run = write(&kube, &idep, &load, image, wait, printer).await?;
    printer.note(&format!(
        "run {run}: {} to {}, {}",
        load.shape.describe(),
        load.destination(),
        load.lengths()
    ));
    if args.no_wait {
        printer.note(&format!(
            "kubectl infera bench show {run}   # its figures, once it has finished"
        ));
        return Ok(());
    }
    let finished = follow(&kube, &run, &load, wait, printer).await;
    printer.clear_progress();
    finished?;
    let view = collect(&kube, &read_run(&kube, &run).await?).await?;
    print_run(printer, &view, args.output)?;
    match view.figures {
        Some(_) => Ok(()),
        None => Err(Error::BenchFailed {
            run,
            message: view.message.unwrap_or_default(),
        }),
    }
}

/// Writes a run of `load` against `idep`, all or nothing: the ConfigMap and the Job dry-run,
/// then the ConfigMap, then the Job (a refused Job takes the ConfigMap back). Its name.
async fn write(
    kube: &Kube,
    idep: &InferaDeployment,
    load: &Load,
    image: &str,
    deadline: Duration,
    printer: &Printer,
) -> Result<String> {
    let (namespace, name) = (&kube.namespace, idep.name_any());
    let run = render::run_name(
        &name,
        &Timestamp::now().strftime("%Y%m%d-%H%M%S").to_string(),
    );
    let data = BTreeMap::from([
        (LOAD_KEY.to_string(), to_json(load)?),
        (
            CONFIG_KEY.to_string(),
            infera_core::yaml::to_yaml(&render::config(load))
                .map_err(|e| Error::serialize("inference-perf's config", "YAML", e))?,
        ),
    ]);
    let token = idep
        .spec
        .model
        .as_ref()
        .and_then(|m| m.token_secret_ref.as_ref())
        .map(|r| (r.name.as_str(), r.key.as_deref().unwrap_or("HF_TOKEN")));
    let config_map = render::config_map(
        &run,
        namespace,
        &name,
        &idep.uid().unwrap_or_default(),
        &data,
    );
    let job = |owner: &DynamicObject| {
        let uid = owner.uid().unwrap_or_default();
        render::job(
            &run,
            namespace,
            &name,
            &uid,
            image,
            token,
            deadline.as_secs(),
        )
    };
    let maps = apply::dynamic_api(
        &kube.client,
        &ApiResource::erase::<ConfigMap>(&()),
        Some(namespace),
    );
    let jobs = apply::dynamic_api(
        &kube.client,
        &ApiResource::erase::<Job>(&()),
        Some(namespace),
    );
    let exists = maps
        .get_opt(&run)
        .await
        .map_err(|e| Error::kube(format!("reading ConfigMap {namespace}/{run}"), e))?;
    if exists.is_some() {
        return Err(Error::Refused(format!(
            "a run named {run} exists already; start the next one a second later"
        )));
    }
    let map_display = format!("ConfigMap {namespace}/{run}");
    let job_display = format!("Job {namespace}/{run}");
    let (dry, _) = apply::apply(&maps, &config_map, &run, &map_display, None, true, false).await?;
    apply::apply(&jobs, &job(&dry), &run, &job_display, None, true, false).await?;
    let (written, _) =
        apply::apply(&maps, &config_map, &run, &map_display, None, false, false).await?;
    if let Err(refused) = apply::apply(
        &jobs,
        &job(&written),
        &run,
        &job_display,
        None,
        false,
        false,
    )
    .await
    {
        if let Err(e) = maps.delete(&run, &DeleteParams::default()).await {
            printer.warn(&format!("{map_display} stays: {}", kube_message(e)));
        }
        return Err(refused);
    }
    Ok(run)
}

fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string_pretty(value).map_err(|e| Error::serialize("the run's load", "JSON", e))
}

/// Watches the run's Job until it has finished, with progress on a terminal; a timeout keeps the
/// run.
async fn follow(
    kube: &Kube,
    run: &str,
    load: &Load,
    wait: Duration,
    printer: &Printer,
) -> Result<()> {
    let namespace = &kube.namespace;
    let api: Api<Job> = Api::namespaced(kube.client.clone(), namespace);
    let mut jobs = Box::pin(watch::object(api, run, format!("Job {namespace}/{run}")));
    let deadline = tokio::time::Instant::now() + wait;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut started: Option<Timestamp> = None;
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => {
                return Err(Error::Timeout {
                    after: human(wait),
                    why: format!("run {run} has not finished; it goes on: kubectl infera bench show {run}"),
                });
            }
            _ = tick.tick() => printer.progress(&progress(load, started, Timestamp::now())),
            event = jobs.next() => match event {
                None => return Err(Error::WatchEnded { what: format!("Job {namespace}/{run}") }),
                Some(Err(e)) => return Err(e),
                Some(Ok(None)) => return Err(Error::Deleted { object: format!("Job {namespace}/{run}") }),
                Some(Ok(Some(job))) => {
                    if finished(&job).is_some() {
                        return Ok(());
                    }
                    started = job.status.as_ref().and_then(|s| s.start_time.as_ref()).map(|t| t.0);
                }
            },
        }
    }
}

/// The progress line: a bar over the rate's duration, or the time so far for a concurrency.
fn progress(load: &Load, started: Option<Timestamp>, now: Timestamp) -> String {
    let Some(started) = started else {
        return "waiting for the Job to start".into();
    };
    let elapsed = now
        .as_second()
        .saturating_sub(started.as_second())
        .max(0)
        .unsigned_abs();
    match load.shape.seconds() {
        Some(total) => {
            let filled = (elapsed.min(total) * 30 / total.max(1)) as usize;
            format!(
                "[{}{}] {} of {} ({}; the image and tokenizer first)",
                "=".repeat(filled),
                " ".repeat(30 - filled),
                human(Duration::from_secs(elapsed)),
                human(Duration::from_secs(total)),
                load.shape.describe()
            )
        }
        None => format!(
            "{} in, {}",
            human(Duration::from_secs(elapsed)),
            load.shape.describe()
        ),
    }
}

/// `Some(true)` once the Job has succeeded, `Some(false)` once it has failed.
fn finished(job: &Job) -> Option<bool> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    conditions
        .iter()
        .filter(|c| c.status == "True")
        .find_map(|c| match c.type_.as_str() {
            "Complete" => Some(true),
            "Failed" => Some(false),
            _ => None,
        })
}

/// The run's ConfigMap.
async fn read_run(kube: &Kube, run: &str) -> Result<ConfigMap> {
    let namespace = &kube.namespace;
    let api: Api<ConfigMap> = Api::namespaced(kube.client.clone(), namespace);
    let map = api
        .get_opt(run)
        .await
        .map_err(|e| Error::kube(format!("reading run {namespace}/{run}"), e))?;
    match map {
        Some(map)
            if map
                .labels()
                .get(infera_core::naming::LABEL_NAME)
                .map(String::as_str)
                == Some(APP) =>
        {
            Ok(map)
        }
        _ => Err(Error::not_found(
            format!("run {namespace}/{run}"),
            "kubectl infera bench list",
        )),
    }
}

/// The run as it stands, its summary collected from the Job's log (and kept in the ConfigMap)
/// when it has finished and was not yet.
async fn collect(kube: &Kube, map: &ConfigMap) -> Result<RunView> {
    let run = map.name_any();
    let namespace = &kube.namespace;
    let data = map.data.clone().unwrap_or_default();
    let deployment = map
        .labels()
        .get(infera_core::naming::LABEL_INSTANCE)
        .cloned()
        .unwrap_or_default();
    let load: Load = data
        .get(LOAD_KEY)
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| {
            Error::Refused(format!("ConfigMap {namespace}/{run} holds no run's load"))
        })?;
    let mut view = RunView {
        run: run.clone(),
        deployment: deployment.clone(),
        created: map.creation_timestamp().map(|t| t.0),
        state: State::Pending,
        load,
        figures: None,
        message: None,
    };
    if let Some(summary) = data.get(SUMMARY_KEY) {
        return Ok(with_summary(view, summary));
    }
    let jobs: Api<Job> = Api::namespaced(kube.client.clone(), namespace);
    let job = jobs
        .get_opt(&run)
        .await
        .map_err(|e| Error::kube(format!("reading Job {namespace}/{run}"), e))?;
    let Some(job) = job else {
        view.state = State::Lost;
        view.message = Some(
            "its Job is gone (deleted, or a day past its end) and its summary was never collected"
                .into(),
        );
        return Ok(view);
    };
    let pods: Api<Pod> = Api::namespaced(kube.client.clone(), namespace);
    let selector = format!("batch.kubernetes.io/job-name={run}");
    let pod = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::kube(format!("listing the pods of Job {namespace}/{run}"), e))?
        .items
        .into_iter()
        .max_by_key(|p| p.creation_timestamp().map(|t| t.0));
    match finished(&job) {
        None => {
            let running = pod
                .as_ref()
                .and_then(|p| p.status.as_ref()?.phase.as_deref())
                == Some("Running");
            view.state = if running {
                State::Running
            } else {
                State::Pending
            };
            Ok(view)
        }
        Some(succeeded) => {
            view.state = if succeeded {
                State::Succeeded
            } else {
                State::Failed
            };
            let log = match &pod {
                Some(pod) => pods
                    .logs(&pod.name_any(), &LogParams::default())
                    .await
                    .map_err(|e| {
                        format!(
                            "the log of pod {} cannot be read: {}",
                            pod.name_any(),
                            kube_message(e)
                        )
                    }),
                None => Err("its pod is gone".to_string()),
            };
            match log {
                Ok(log) => match summary::extract(&log) {
                    Some(summary) if succeeded => {
                        keep(kube, map, &deployment, summary).await?;
                        return Ok(with_summary(view, summary));
                    }
                    _ => view.message = Some(failure(&job, &log)),
                },
                Err(why) => {
                    let ended = job_failure(&job).unwrap_or_else(|| "the Job completed".into());
                    view.message = Some(format!("{ended}; {why}"));
                }
            }
            Ok(view)
        }
    }
}

fn with_summary(mut view: RunView, summary: &str) -> RunView {
    match serde_json::from_str(summary)
        .map_err(|e| e.to_string())
        .and_then(|v| Figures::of(&v))
    {
        Ok(figures) => {
            view.state = State::Succeeded;
            view.figures = Some(figures);
        }
        Err(e) => {
            view.state = State::Failed;
            view.message = Some(format!("inference-perf's summary cannot be read: {e}"));
        }
    }
    view
}

/// Why the Job failed, from its `Failed` condition; `None` when it did not.
fn job_failure(job: &Job) -> Option<String> {
    let conditions = job.status.as_ref()?.conditions.as_ref()?;
    let failed = conditions
        .iter()
        .find(|c| c.type_ == "Failed" && c.status == "True")?;
    Some(format!(
        "the Job failed: {}: {}",
        failed.reason.as_deref().unwrap_or("Failed"),
        failed.message.as_deref().unwrap_or_default()
    ))
}

/// Why a finished run has no figures: how the Job failed, or that no summary was printed, and
/// its log's last lines.
fn failure(job: &Job, log: &str) -> String {
    let condition = job_failure(job).unwrap_or_else(|| "inference-perf printed no summary".into());
    let lines: Vec<&str> = log.lines().collect();
    let tail = lines[lines.len().saturating_sub(FAILED_LINES)..]
        .iter()
        .map(|l| format!("  {}", redact(l)))
        .collect::<Vec<_>>()
        .join("\n");
    if tail.is_empty() {
        condition
    } else {
        format!("{condition}; the log ends:\n{tail}")
    }
}

/// Writes the summary into the run's ConfigMap (the same apply, one key more).
async fn keep(kube: &Kube, map: &ConfigMap, deployment: &str, summary: &str) -> Result<()> {
    let run = map.name_any();
    let namespace = &kube.namespace;
    let mut data = map.data.clone().unwrap_or_default();
    data.insert(SUMMARY_KEY.to_string(), summary.to_string());
    let owner = map
        .owner_references()
        .iter()
        .find(|o| o.kind == "InferaDeployment")
        .map(|o| o.uid.clone())
        .unwrap_or_default();
    let object = render::config_map(&run, namespace, deployment, &owner, &data);
    let maps = apply::dynamic_api(
        &kube.client,
        &ApiResource::erase::<ConfigMap>(&()),
        Some(namespace),
    );
    apply::apply(
        &maps,
        &object,
        &run,
        &format!("ConfigMap {namespace}/{run}"),
        None,
        false,
        false,
    )
    .await?;
    Ok(())
}

fn print_run(printer: &Printer, view: &RunView, output: Output) -> Result<()> {
    match output {
        Output::Json => printer.json(view),
        Output::Yaml => printer.yaml(view),
        Output::Table | Output::Wide => {
            let load = &view.load;
            let mut text = format!(
                "Run:         {}\nDeployment:  {}\nLoad:        {}, {}, to {}\nState:       {:?}\n",
                view.run,
                view.deployment,
                load.shape.describe(),
                load.lengths(),
                load.destination(),
                view.state
            );
            let targets: Vec<String> = [
                ("TTFT", load.slo_ttft_seconds),
                ("ITL", load.slo_itl_seconds),
            ]
            .into_iter()
            .filter_map(|(n, s)| Some(format!("{n} ≤ {}", summary::seconds(Some(s?)))))
            .collect();
            if !targets.is_empty() {
                text.push_str(&format!("Targets:     {}\n", targets.join(", ")));
            }
            if let Some(message) = &view.message {
                text.push_str(&format!("Message:     {message}\n"));
            }
            if let Some(figures) = &view.figures {
                text.push('\n');
                text.push_str(&summary::table(printer, figures));
            }
            printer.out(text.trim_end());
            Ok(())
        }
    }
}

async fn list(
    name: Option<&str>,
    output: Output,
    global: &GlobalArgs,
    printer: &Printer,
) -> Result<()> {
    let kube = client::connect(global).await?;
    let namespace = &kube.namespace;
    if let Some(name) = name {
        view::deployment(&kube, namespace, name).await?;
    }
    let api: Api<ConfigMap> = Api::namespaced(kube.client.clone(), namespace);
    let selector = runs_selector(name);
    let mut maps = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| Error::kube(format!("listing the runs in {namespace}"), e))?
        .items;
    maps.sort_by_key(|m| (m.creation_timestamp().map(|t| t.0), m.name_any()));
    let mut views = Vec::with_capacity(maps.len());
    for map in &maps {
        views.push(collect(&kube, map).await?);
    }
    match output {
        Output::Json => printer.json(&views),
        Output::Yaml => printer.yaml(&views),
        Output::Table | Output::Wide => {
            if views.is_empty() {
                printer.note(&format!(
                    "No runs in {namespace}; `kubectl infera bench NAME` starts one."
                ));
                return Ok(());
            }
            let now = Timestamp::now();
            let rows: Vec<Vec<Cell>> = views.iter().map(|v| list_row(v, now)).collect();
            let headers = [
                "RUN", "AGE", "STATE", "LOAD", "IN/OUT", "OK", "FAILED", "TTFT P95", "ITL P95",
                "TOKENS/S", "GOODPUT",
            ];
            printer.out(columns(printer, &headers, &rows).trim_end());
            Ok(())
        }
    }
}

/// The label selector of the runs of `deployment`, or of every run.
pub fn runs_selector(deployment: Option<&str>) -> String {
    let mut selector = format!("{}={APP}", infera_core::naming::LABEL_NAME);
    if let Some(name) = deployment {
        selector.push_str(&format!(",{}={name}", infera_core::naming::LABEL_INSTANCE));
    }
    selector
}

fn list_row(view: &RunView, now: Timestamp) -> Vec<Cell> {
    let f = view.figures.as_ref();
    let age_text = view
        .created
        .map_or_else(|| "-".into(), |c| age(now.as_second() - c.as_second()));
    vec![
        Cell::from(view.run.as_str()),
        Cell::from(age_text),
        Cell::from(format!("{:?}", view.state)),
        Cell::from(view.load.shape.describe()),
        Cell::from(format!(
            "{}/{}",
            view.load.input_tokens, view.load.output_tokens
        )),
        Cell::from(f.map_or_else(|| "-".into(), |f| f.succeeded.to_string())),
        Cell::from(f.map_or_else(|| "-".into(), |f| f.failed.to_string())),
        Cell::from(summary::seconds(
            f.and_then(|f| f.ttft_seconds).map(|p| p.p95),
        )),
        Cell::from(summary::seconds(
            f.and_then(|f| f.itl_seconds).map(|p| p.p95),
        )),
        Cell::from(f.map_or_else(
            || "-".into(),
            |f| format!("{:.1}", f.output_tokens_per_second),
        )),
        Cell::from(
            f.and_then(|f| f.goodput_percent)
                .map_or_else(|| "-".into(), |g| format!("{g:.1}%")),
        ),
    ]
}

async fn compare(
    before: &str,
    after: &str,
    output: Output,
    global: &GlobalArgs,
    printer: &Printer,
) -> Result<()> {
    let kube = client::connect(global).await?;
    let mut views = Vec::with_capacity(2);
    for run in [before, after] {
        let view = collect(&kube, &read_run(&kube, run).await?).await?;
        if view.figures.is_none() {
            return Err(Error::Refused(format!(
                "run {run} has no figures ({:?}); `kubectl infera bench show {run}` says why",
                view.state
            )));
        }
        views.push(view);
    }
    match output {
        Output::Json => printer.json(&views),
        Output::Yaml => printer.yaml(&views),
        Output::Table | Output::Wide => {
            let (Some(b), Some(a)) = (&views[0].figures, &views[1].figures) else {
                return Ok(());
            };
            let mut text = String::new();
            for view in &views {
                text.push_str(&format!(
                    "{}: {}, {}\n",
                    view.run,
                    view.load.shape.describe(),
                    view.load.lengths()
                ));
            }
            text.push('\n');
            text.push_str(&summary::compare(printer, (before, after), b, a));
            printer.out(text.trim_end());
            Ok(())
        }
    }
}
