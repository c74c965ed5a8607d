//! Polling with a deadline, instead of sleeping.

use std::fmt::Display;
use std::time::Duration;

use tokio::time::Instant;

/// Calls `check` until it returns `Ok`, at most until `timeout` has passed, and returns its value.
/// On timeout the error says how long and how many attempts it waited, and carries the last error.
/// Each attempt is itself bounded by the remaining time, so a hanging request cannot overrun it.
///
/// `check` is an async closure: `|| async { … }` works, and `async || { … }` may also borrow
/// captured state mutably (e.g. `child.ensure_running()?` on a `&mut` child between attempts).
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
pub async fn eventually<T, E, F>(timeout: Duration, check: F) -> anyhow::Result<T>
where
    F: AsyncFnMut() -> Result<T, E>,
    E: Display,
{
    eventually_every(timeout, Duration::from_millis(250), check).await
}

/// [`eventually`] with a chosen interval between attempts.
pub async fn eventually_every<T, E, F>(
    timeout: Duration,
    interval: Duration,
    mut check: F,
) -> anyhow::Result<T>
where
    F: AsyncFnMut() -> Result<T, E>,
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

/// Waits until InferaDeployment `name` reports `state: Ready`; on timeout the error carries the
/// last state and conditions.
pub async fn ready(
    ideps: &kube::Api<infera_core::InferaDeployment>,
    name: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    eventually(timeout, || async {
        let status = ideps.get(name).await?.status.unwrap_or_default();
        anyhow::ensure!(
            status.state == Some(infera_core::State::Ready),
            "state {:?}, conditions {:?}",
            status.state,
            status.conditions
        );
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn returns_the_value_once_the_check_passes() -> anyhow::Result<()> {
        let mut n = 0;
        let v = eventually_every(
            Duration::from_secs(5),
            Duration::from_millis(1),
            async || {
                n += 1;
                if n < 3 {
                    Err(format!("attempt {n}"))
                } else {
                    Ok(n)
                }
            },
        )
        .await?;
        anyhow::ensure!(v == 3);
        Ok(())
    }

    #[tokio::test]
    async fn times_out_with_the_last_error() -> anyhow::Result<()> {
        let r: anyhow::Result<()> = eventually_every(
            Duration::from_millis(50),
            Duration::from_millis(10),
            || async { Err("still broken") },
        )
        .await;
        let msg = format!(
            "{:#}",
            r.err()
                .ok_or_else(|| anyhow::anyhow!("expected a timeout"))?
        );
        anyhow::ensure!(
            msg.contains("still broken") && msg.contains("50ms"),
            "{msg}"
        );
        Ok(())
    }

    #[tokio::test]
    async fn a_hanging_attempt_is_cut_at_the_deadline() -> anyhow::Result<()> {
        let start = Instant::now();
        let r: anyhow::Result<()> = eventually(Duration::from_millis(100), || async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok::<(), String>(())
        })
        .await;
        anyhow::ensure!(r.is_err() && start.elapsed() < Duration::from_secs(5));
        Ok(())
    }
}
