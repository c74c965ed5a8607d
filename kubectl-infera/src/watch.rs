//! Following one named object with a watch (field selector `metadata.name`) instead of polling it.

use std::fmt::Debug;

use futures::{Stream, StreamExt, future};
use kube::{Api, Resource, runtime::watcher};
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// The object whenever it changes; `None` while it does not exist. Failing to list or to start
/// watching is an error; errors of a running watch are retried by the watcher.
pub fn object<K>(api: Api<K>, name: &str, what: String) -> impl Stream<Item = Result<Option<K>>>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    watcher::watch_object(api, name).filter_map(move |item| {
        future::ready(match item {
            Ok(object) => Some(Ok(object)),
            Err(e) => fatal(&what, e).map(Err),
        })
    })
}

/// A watcher error that should end the command; `None` for one the watcher recovers from.
pub fn fatal(what: &str, error: watcher::Error) -> Option<Error> {
    match error {
        watcher::Error::InitialListFailed(e) | watcher::Error::WatchStartFailed(e) => {
            Some(Error::kube(format!("watching {what}"), e))
        }
        e @ watcher::Error::NoResourceVersion => {
            Some(Error::Failed(format!("watching {what}: {e}")))
        }
        watcher::Error::WatchError(_) | watcher::Error::WatchFailed(_) => None,
    }
}
