//! Leader election on a `coordination.k8s.io/v1` Lease: one replica reconciles, the others stand
//! by and take over once the holder stops renewing for a lease duration.

use std::time::Duration;

use tokio::time::Instant;

use k8s_openapi::{
    api::coordination::v1::{Lease, LeaseSpec},
    apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta},
    jiff::Timestamp,
};
use kube::{Api, api::PostParams};
use tracing::{info, warn};

use futures::{
    FutureExt,
    future::{BoxFuture, Shared},
};

use crate::{Error, metrics::Metrics};

/// Where the Lease lives and how it is held.
#[derive(Clone, Debug)]
pub struct LeaseConfig {
    pub name: String,
    pub identity: String,
    /// How long a holder keeps the Lease without renewing it.
    pub duration: Duration,
    /// How often the holder renews, and how often a candidate retries.
    pub retry: Duration,
}

/// The holder's record as this replica last saw it, and when, on this replica's clock.
/// Expiry is judged by how long the record has not changed here, not by comparing the holder's
/// timestamps with our clock, so clock skew between replicas cannot cause two leaders.
struct Observed {
    record: (Option<String>, Option<MicroTime>),
    since: Instant,
}

/// Waits for the Lease (or `shutdown`), then runs `run` as the leader until `shutdown` or until
/// the Lease is lost, and gives the Lease up. Returns why it was lost, if it was: the caller
/// exits, so that a fresh replica stands by.
pub async fn lead<F, R>(
    api: &Api<Lease>,
    config: &LeaseConfig,
    metrics: &Metrics,
    shutdown: Shared<BoxFuture<'static, ()>>,
    run: F,
) -> Option<String>
where
    F: FnOnce(Shared<BoxFuture<'static, ()>>) -> R,
    R: Future<Output = ()>,
{
    tokio::select! {
        () = shutdown.clone() => return None,
        () = acquire(api, config) => {}
    }
    metrics.set_leader(true);
    let (lost_tx, lost_rx) = tokio::sync::oneshot::channel();
    let holder = {
        let (api, config) = (api.clone(), config.clone());
        tokio::spawn(async move {
            let _ = lost_tx.send(crate::chain(&hold(&api, &config).await));
        })
    };
    let lost = lost_rx.shared();
    let stop = {
        let lost = lost.clone();
        async move {
            tokio::select! { () = shutdown => {}, _ = lost => {} }
        }
        .boxed()
        .shared()
    };
    run(stop).await;
    metrics.set_leader(false);
    if let Some(Ok(reason)) = lost.now_or_never() {
        return Some(reason);
    }
    holder.abort();
    release(api, config).await;
    None
}

/// Waits until this replica holds the Lease; API errors are logged and retried.
pub async fn acquire(api: &Api<Lease>, config: &LeaseConfig) {
    let mut observed = None;
    loop {
        match try_acquire(api, config, &mut observed).await {
            Ok(true) => {
                info!(lease = %config.name, identity = %config.identity, "acquired leadership");
                return;
            }
            Ok(false) => {}
            Err(error) => warn!(%error, "cannot acquire the leader Lease"),
        }
        tokio::time::sleep(config.retry).await;
    }
}

/// Renews the Lease until it is lost; returns why. A holder that could not renew for two thirds
/// of the lease duration gives up, well before a standby may take over.
pub async fn hold(api: &Api<Lease>, config: &LeaseConfig) -> Error {
    let deadline = config.duration * 2 / 3;
    let mut renewed = Instant::now();
    let mut observed = None;
    loop {
        tokio::time::sleep(config.retry).await;
        let attempt = Instant::now();
        match try_acquire(api, config, &mut observed).await {
            Ok(true) => renewed = attempt,
            Ok(false) => {
                return Error::LeaseTaken {
                    name: config.name.clone(),
                };
            }
            Err(source) if renewed.elapsed() >= deadline => {
                return Error::LeaseNotRenewed {
                    name: config.name.clone(),
                    source,
                };
            }
            Err(error) => warn!(%error, "cannot renew the leader Lease; retrying"),
        }
    }
}

/// Gives the Lease up so a standby can take over at once.
pub async fn release(api: &Api<Lease>, config: &LeaseConfig) {
    let Ok(Some(mut lease)) = api.get_opt(&config.name).await else {
        return;
    };
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    if spec.holder_identity.as_deref() != Some(config.identity.as_str()) {
        return;
    }
    spec.holder_identity = None;
    spec.renew_time = None;
    if let Err(error) = api
        .replace(&config.name, &PostParams::default(), &lease)
        .await
    {
        warn!(%error, "cannot release the leader Lease");
    }
}

/// Takes or renews the Lease if it is free, expired or ours. Optimistic concurrency on the
/// resourceVersion makes two candidates racing for it safe: one of them gets a 409.
async fn try_acquire(
    api: &Api<Lease>,
    config: &LeaseConfig,
    observed: &mut Option<Observed>,
) -> kube::Result<bool> {
    let now = Timestamp::now();
    let duration_seconds = i32::try_from(config.duration.as_secs()).unwrap_or(i32::MAX);
    let Some(mut lease) = api.get_opt(&config.name).await? else {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(config.name.clone()),
                ..Default::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(config.identity.clone()),
                lease_duration_seconds: Some(duration_seconds),
                acquire_time: Some(MicroTime(now)),
                renew_time: Some(MicroTime(now)),
                lease_transitions: Some(0),
                ..Default::default()
            }),
        };
        return match api.create(&PostParams::default(), &lease).await {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
            Err(error) => Err(error),
        };
    };
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    let ours = spec.holder_identity.as_deref() == Some(config.identity.as_str());
    let free = spec.holder_identity.as_deref().is_none_or(str::is_empty);
    let record = (spec.holder_identity.clone(), spec.renew_time.clone());
    let held_for = Duration::from_secs(
        spec.lease_duration_seconds
            .map_or(config.duration.as_secs(), |s| s.max(0) as u64),
    );
    let expired = match observed {
        Some(seen) if seen.record == record => seen.since.elapsed() > held_for,
        _ => {
            *observed = Some(Observed {
                record,
                since: Instant::now(),
            });
            false
        }
    };
    if !(ours || free || expired) {
        return Ok(false);
    }
    if !ours {
        spec.acquire_time = Some(MicroTime(now));
        spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        spec.holder_identity = Some(config.identity.clone());
    }
    spec.lease_duration_seconds = Some(duration_seconds);
    spec.renew_time = Some(MicroTime(now));
    match api
        .replace(&config.name, &PostParams::default(), &lease)
        .await
    {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
        Err(error) => Err(error),
    }
}
