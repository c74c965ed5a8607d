//! Polling with a deadline, instead of sleeping.

use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// Calls `check` until it returns `Ok`, at most until `timeout` has passed, and returns its value.
/// On timeout the error says how long and how many attempts it waited, and carries the last error.
/// Each attempt is itself bounded by the remaining time, so a hanging request cannot overrun it.
///
/// ```no_run
/// # async fn f(pods: kube::Api<k8s_openapi::api::core::v1::Pod>) -> anyhow::Result<()> {
/// use std::time::Duration;
/// let pod = infera_e2e::eventually(Duration::from_secs(30), || async {
///     let p = pods.get("web-0").await?;
///     anyhow::ensure!(p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"), "not running: {:?}", p.status);
///     Ok(p)
/// })
/// .await?;
/// # Ok(()) }
/// ```
pub async fn eventually<T, E, F, Fut>(timeout: Duration, check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Display,
{
    eventually_every(timeout, Duration::from_millis(250), check).await
}

/// [`eventually`] with a chosen interval between attempts.
pub async fn eventually_every<T, E, F, Fut>(
    timeout: Duration,
    interval: Duration,
    mut check: F,
) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: Display,
{
    let start = Instant::now();
    let deadline = start + timeout;
    let mut attempts = 0u32;
    let mut last: Option<String> = None;
    loop {
        attempts += 1;
        match tokio::time::timeout_at(deadline, check()).await {
            Ok(Ok(v)) => return Ok(v),
            Ok(Err(e)) => last = Some(format!("{e:#}")),
            Err(_) => {
                last = Some(format!(
                    "attempt {attempts} was still running at the deadline (previous error: {})",
                    last.as_deref().unwrap_or("none")
                ));
            }
        }
        let now = Instant::now();
        if now >= deadline {
            anyhow::bail!(
                "condition not met within {:?} ({attempts} attempts); last error: {}",
                timeout,
                last.as_deref().unwrap_or("none")
            );
        }
        tokio::time::sleep_until((now + interval).min(deadline)).await;
    }
}
