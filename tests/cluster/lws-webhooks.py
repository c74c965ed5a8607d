#!/usr/bin/env python3
"""Rewrites LeaderWorkerSet's webhook manifests so kube-apiserver reaches an lws-controller running
as a local process: every clientConfig.service becomes url https://127.0.0.1:<port><path> with our
CA bundle (what controller-runtime's envtest does), and the pod webhooks keep the objectSelector
that lws's kustomize patches add, so that only LWS pods ever go through them (failurePolicy is Fail).

usage: lws-webhooks.py <config/webhook/manifests.yaml> <port> <ca.crt>   > webhooks.yaml
"""
import base64
import sys

import yaml

src, port, ca = sys.argv[1], sys.argv[2], sys.argv[3]
with open(ca, "rb") as f:
    ca_bundle = base64.b64encode(f.read()).decode()
# config/webhook/{mutating,validating}-patch.yaml
pod_selector = {"matchExpressions": [{"key": "leaderworkerset.sigs.k8s.io/name", "operator": "Exists"}]}

with open(src) as f:
    docs = [d for d in yaml.safe_load_all(f) if d]
for d in docs:
    d["metadata"] = {"name": "lws-" + d["metadata"]["name"]}
    for w in d["webhooks"]:
        path = w["clientConfig"]["service"]["path"]
        w["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca_bundle}
        if w["name"] in ("mpod.kb.io", "vpod.kb.io"):
            w["objectSelector"] = pod_selector
        w.setdefault("timeoutSeconds", 10)
yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
