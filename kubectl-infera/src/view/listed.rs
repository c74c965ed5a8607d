//! An InferaDeployment as the list reads it: [`Listed`].

use std::borrow::Cow;

use infera_core::{BackendFramework, InferaDeployment, State};
use k8s_openapi::{
    apimachinery::pkg::apis::meta::v1::{ListMeta, ObjectMeta, Time},
    jiff::Timestamp,
};
use kube::{Resource, core::NamespaceResourceScope};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::{PENDING, Summary, UNREPORTED, seconds_since};

/// Only what a [`Summary`](super::Summary) shows, parsed straight from the API's JSON. A whole
/// InferaDeployment parses every field of its spec into its types and each `managedFields` entry
/// into a JSON tree, all of it dropped once the row is made.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Listed {
    /// Name, namespace, uid, resourceVersion (what a watch resumes from) and creation time.
    #[serde(deserialize_with = "identity")]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: ListedSpec,
    #[serde(default)]
    pub status: ListedStatus,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedSpec {
    pub backend_framework: Option<BackendFramework>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ListedStatus {
    pub state: Option<State>,
    pub services_ready: Option<String>,
    pub conditions: Vec<ListedCondition>,
    pub endpoint: Option<String>,
    pub update_revision: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct ListedCondition {
    #[serde(rename = "type")]
    pub type_: String,
    pub reason: String,
}

/// The metadata a row and a watch read; `managedFields`, labels and annotations are skipped
/// unparsed.
fn identity<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ObjectMeta, D::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Identity {
        name: Option<String>,
        namespace: Option<String>,
        uid: Option<String>,
        resource_version: Option<String>,
        creation_timestamp: Option<Time>,
    }
    let meta = Identity::deserialize(deserializer)?;
    Ok(ObjectMeta {
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resource_version: meta.resource_version,
        creation_timestamp: meta.creation_timestamp,
        ..ObjectMeta::default()
    })
}

impl From<&InferaDeployment> for Listed {
    fn from(idep: &InferaDeployment) -> Self {
        let status = idep.status.clone().unwrap_or_default();
        Self {
            metadata: idep.metadata.clone(),
            spec: ListedSpec {
                backend_framework: Some(idep.spec.backend_framework),
            },
            status: ListedStatus {
                state: status.state,
                services_ready: status.services_ready,
                conditions: status
                    .conditions
                    .into_iter()
                    .map(|c| ListedCondition {
                        type_: c.type_,
                        reason: c.reason,
                    })
                    .collect(),
                endpoint: status.endpoint,
                update_revision: status.update_revision,
            },
        }
    }
}

/// Listed and watched as InferaDeployments are.
impl Resource for Listed {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        InferaDeployment::kind(&())
    }

    fn group(_: &()) -> Cow<'_, str> {
        InferaDeployment::group(&())
    }

    fn version(_: &()) -> Cow<'_, str> {
        InferaDeployment::version(&())
    }

    fn plural(_: &()) -> Cow<'_, str> {
        InferaDeployment::plural(&())
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

/// A page of the API server's Table of InferaDeployments (a meta.k8s.io/v1 `Table`): the CRD's
/// printer columns, and per row their cells, in the columns' order, and the object's metadata.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Table {
    pub metadata: ListMeta,
    column_definitions: Vec<Column>,
    rows: Vec<Row>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Column {
    name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Row {
    cells: Vec<Value>,
    object: RowObject,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RowObject {
    #[serde(deserialize_with = "identity")]
    metadata: ObjectMeta,
}

impl Table {
    /// A [`Summary`] per row, from the cells of the columns `infera_core`'s CRD prints (found by
    /// name, so their order does not matter) and the row's metadata.
    pub fn summaries(&self, now: Timestamp) -> impl Iterator<Item = Summary> + '_ {
        let column = |name: &str| self.column_definitions.iter().position(|c| c.name == name);
        let [backend, state, services, reason, endpoint, revision] = [
            "Backend", "State", "Services", "Reason", "Endpoint", "Revision",
        ]
        .map(column);
        self.rows.iter().map(move |row| {
            let cell = |index: Option<usize>| {
                index
                    .and_then(|i| row.cells.get(i))
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let meta = &row.object.metadata;
            Summary {
                namespace: meta.namespace.clone().unwrap_or_default(),
                name: meta.name.clone().unwrap_or_default(),
                backend: cell(backend),
                state: Some(cell(state))
                    .filter(|state| !state.is_empty())
                    .unwrap_or_else(|| PENDING.into()),
                services_ready: Some(cell(services))
                    .filter(|ready| !ready.is_empty())
                    .unwrap_or_else(|| UNREPORTED.into()),
                reason: cell(reason),
                endpoint: cell(endpoint),
                revision: cell(revision),
                age_seconds: seconds_since(meta.creation_timestamp.as_ref(), now),
            }
        })
    }
}
