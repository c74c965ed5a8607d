//! Following objects with watches instead of polling them, and which watch failures end a
//! command.

use std::fmt::Debug;

use futures::{Stream, StreamExt, future};
use kube::{Api, Resource, runtime::watcher};
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// One named object (field selector `metadata.name`), whenever it changes; `None` while it does
/// not exist. Failing to list or to start watching is an error; errors of a running watch are
/// retried by the watcher.
pub fn object<K>(
    api: Api<K>,
    name: &str,
    what: String,
) -> impl Stream<Item = Result<Option<K>>> + use<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    recovering(watcher::watch_object(api, name), what)
}

/// A watcher's stream with the errors it recovers from (by retrying) dropped and the others
/// turned into the command's error.
pub fn recovering<T>(
    stream: impl Stream<Item = std::result::Result<T, watcher::Error>>,
    what: String,
) -> impl Stream<Item = Result<T>> {
    stream.filter_map(move |item| {
        future::ready(match item {
            Ok(item) => Some(Ok(item)),
            Err(e) => fatal(&what, e).map(Err),
        })
    })
}

/// A watcher error that should end the command; `None` for one the watcher recovers from.
pub fn fatal(what: &str, error: watcher::Error) -> Option<Error> {
    match error {
        watcher::Error::WatchError(_) | watcher::Error::WatchFailed(_) => None,
        other => Some(failed(what, other)),
    }
}

/// The command's error for a watch that failed: an API error (forbidden, not found, unreachable)
/// when the API said so, else the watcher's own.
pub fn failed(what: &str, error: watcher::Error) -> Error {
    match error {
        watcher::Error::InitialListFailed(e) | watcher::Error::WatchStartFailed(e) => {
            Error::kube(format!("watching {what}"), e)
        }
        source => Error::Watch {
            what: what.to_string(),
            source,
        },
    }
}
