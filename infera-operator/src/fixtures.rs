//! Test doubles: a mock API server that answers as a real one would and records every request,
//! and a [`Context`] on it whose watch caches are filled by hand.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use http::{Method, Request, Response};
use infera_core::ChildKind;
use k8s_openapi::{
    api::{
        apps::v1::ControllerRevision,
        core::v1::{Pod, ResourceQuota},
    },
    apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
};
use kube::{
    Client,
    api::{DynamicObject, PartialObjectMeta},
    client::Body,
    runtime::{reflector::store::Writer, watcher::Event},
};
use serde_json::{Value, json};

use crate::{
    context::Context,
    live::Live,
    metrics::Metrics,
    observe::{self, CacheWriter},
};

type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

/// The resourceVersion and generation the mock API server gives every object it returns.
pub const RESOURCE_VERSION: &str = "5";
/// The resourceVersion of the InferaDeployment after a status write.
const STATUS_WRITTEN: &str = "status-written";
pub const GENERATION: i64 = 1;

/// One request the operator sent.
#[derive(Debug)]
pub struct Sent {
    /// `PATCH /apis/apps/v1/namespaces/demo/deployments/calm-worker?&fieldManager=infera-operator`
    pub line: String,
    pub body: Value,
    /// The body as sent.
    pub text: String,
}

/// The watch caches of a test [`Context`], written by hand as watches would.
pub struct Caches {
    children: BTreeMap<ChildKind, CacheWriter<Live>>,
    pods: CacheWriter<Pod>,
    _crds: Writer<PartialObjectMeta<CustomResourceDefinition>>,
    _quotas: CacheWriter<ResourceQuota>,
    revisions: CacheWriter<ControllerRevision>,
}

impl Caches {
    /// A child was created or changed.
    pub fn apply(&mut self, kind: ChildKind, object: DynamicObject) {
        if let Some(writer) = self.children.get_mut(&kind) {
            writer.apply(&Event::Apply(Live::from(object)));
        }
    }

    /// A ControllerRevision of the history was created or changed.
    pub fn apply_revision(&mut self, revision: ControllerRevision) {
        self.revisions.apply(&Event::Apply(revision));
    }

    /// A pod of ours was created or changed.
    pub fn apply_pod(&mut self, pod: Pod) {
        self.pods.apply(&Event::Apply(pod));
    }

    /// A child was deleted.
    pub fn delete(&mut self, kind: ChildKind, object: DynamicObject) {
        if let Some(writer) = self.children.get_mut(&kind) {
            writer.apply(&Event::Delete(Live::from(object)));
        }
    }
}

/// A context on a mock API server whose synced caches hold `children`, no pods, CRDs or quotas; the
/// server answers with the InferaDeployment `deployment` where it must return one.
pub async fn context(
    deployment: Value,
    children: Vec<(ChildKind, DynamicObject)>,
) -> (Arc<Context>, Caches, ApiServer) {
    let (service, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let client = Client::new(service, "default");
    // Its watch streams are never polled: the caches are filled here instead.
    let (mut observed, _) = observe::watch(&client, Some("demo"));
    let mut writers = BTreeMap::new();
    for kind in ChildKind::ALL {
        let mut writer = observe::child_cache(kind);
        observed.children.insert(kind, writer.as_reader());
        writer.apply(&Event::Init);
        for (_, object) in children.iter().filter(|(k, _)| *k == kind) {
            writer.apply(&Event::InitApply(Live::from(object.clone())));
        }
        writer.apply(&Event::InitDone);
        writers.insert(kind, writer);
    }
    let mut pods = observe::pod_cache();
    observed.pods = pods.as_reader();
    pods.apply(&Event::InitDone);
    let mut crds = Writer::default();
    observed.crds = crds.as_reader();
    crds.apply_watcher_event(&Event::InitDone);
    let mut quotas = observe::quota_cache();
    observed.quotas = quotas.as_reader();
    quotas.apply(&Event::InitDone);
    let mut revisions = observe::revision_cache();
    observed.revisions = revisions.as_reader();
    revisions.apply(&Event::InitDone);
    observed.track_sync();
    let synced = async {
        while !observed.synced() {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), synced)
        .await
        .expect("caches synced");
    let ctx = Context::new(
        client,
        observed,
        Arc::new(Metrics::default()),
        "test".into(),
        crate::RESYNC,
    );
    let caches = Caches {
        children: writers,
        pods,
        _crds: crds,
        _quotas: quotas,
        revisions,
    };
    let server = ApiServer {
        handle,
        deployment,
        refuse_status: false,
        refuse_renumber: false,
        refuse: Vec::new(),
    };
    (Arc::new(ctx), caches, server)
}

/// The other end of a test [`Context`]'s client.
pub struct ApiServer {
    handle: Handle,
    deployment: Value,
    /// Status writes are refused, as they are by a CRD that lacks a field the status has.
    pub refuse_status: bool,
    /// A ControllerRevision's renumbering is refused as one stored by an operator before 0.1.1
    /// is: its `data` re-encoded differs from the bytes stored.
    pub refuse_renumber: bool,
    /// Applies (dry runs too) to paths ending so are refused, as an admission webhook refuses.
    pub refuse: Vec<&'static str>,
}

impl ApiServer {
    /// Runs `work` while answering its requests; returns its output and the requests in order.
    pub async fn serve<T>(&mut self, work: impl Future<Output = T>) -> (T, Vec<Sent>) {
        let mut sent = Vec::new();
        let mut work = std::pin::pin!(work);
        let served = async {
            loop {
                tokio::select! {
                    output = &mut work => return output,
                    Some((request, respond)) = self.handle.next_request() => {
                        let request = Self::read(request).await;
                        respond.send_response(self.answer(&request));
                        sent.push(request);
                    }
                }
            }
        };
        let output = tokio::time::timeout(Duration::from_secs(5), served)
            .await
            .expect("work finished");
        (output, sent)
    }

    async fn read(request: Request<Body>) -> Sent {
        let (parts, body) = request.into_parts();
        let bytes = body.collect_bytes().await.expect("a request body");
        Sent {
            line: format!("{} {}", parts.method, parts.uri),
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// What the API server returns: an applied child as it now is, the InferaDeployment with
    /// its new status, the created Event, a deleted object's Status.
    fn answer(&self, request: &Sent) -> Response<Body> {
        let (method, path) = request.line.split_once(' ').expect("METHOD uri");
        let path = path.split('?').next().unwrap_or_default();
        let body = match Method::from_bytes(method.as_bytes()) {
            Ok(Method::PATCH) if self.refuse.iter().any(|r| path.ends_with(r)) => {
                let refused = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "code": 403, "reason": "Forbidden", "message": "the webhook says no"});
                let mut response = Response::new(Body::from(refused.to_string().into_bytes()));
                *response.status_mut() = http::StatusCode::FORBIDDEN;
                return response;
            }
            Ok(Method::PATCH) if path.ends_with("/status") && self.refuse_status => {
                let refused = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "code": 500, "message": ".status.servicesReady: field not declared in schema"});
                let mut response = Response::new(Body::from(refused.to_string().into_bytes()));
                *response.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
                return response;
            }
            Ok(Method::PATCH) if path.contains("/controllerrevisions/") && self.refuse_renumber => {
                let refused = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "code": 422, "reason": "Invalid",
                    "message": "ControllerRevision.apps \"calm-bbb\" is invalid: data: Invalid value: ...: field is immutable"});
                let mut response = Response::new(Body::from(refused.to_string().into_bytes()));
                *response.status_mut() = http::StatusCode::UNPROCESSABLE_ENTITY;
                return response;
            }
            Ok(Method::PATCH) if path.ends_with("/status") => {
                let mut deployment = self.deployment.clone();
                deployment["status"] = request.body["status"].clone();
                // A new version, as the API server makes for a status that changed.
                deployment["metadata"]["resourceVersion"] = json!(STATUS_WRITTEN);
                deployment
            }
            Ok(Method::PATCH) => {
                let mut object = request.body.clone();
                object["metadata"]["resourceVersion"] = json!(RESOURCE_VERSION);
                object["metadata"]["generation"] = json!(GENERATION);
                object
            }
            Ok(Method::POST) => request.body.clone(),
            Ok(Method::DELETE) => {
                json!({"kind": "Status", "apiVersion": "v1", "status": "Success"})
            }
            _ => panic!("unexpected request {}", request.line),
        };
        Response::new(Body::from(body.to_string().into_bytes()))
    }
}
