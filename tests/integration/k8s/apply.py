#!/usr/bin/env python3
"""A small `kubectl apply` for the test bed, which has no kubectl: reads
Kubernetes manifests (YAML, several documents a file; a folder: its .yaml,
.yml and .json files in name order, as kubectl takes them), turns each object
into JSON and POSTs it to its REST path; an object that exists already
(409) is replaced (PUT, with the current resourceVersion).

  apply.py --server URL --token-file F --cacert F [--kinds K,K] [--strict] [--dry-run] PATH...
  apply.py --print [--kinds K,K] PATH...     # the REST path and JSON of each object, nothing sent

--kinds: only these kinds (Namespace,ServiceAccount,ClusterRole,...).
--strict: the API server refuses unknown or duplicate fields
(fieldValidation=Strict), so a misspelt key in a manifest is an error.
--dry-run: the API server checks and admits each object but stores none.
Prints one line an object; exits 1 if any was refused.
"""
import argparse
import json
import os
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request

import yaml

# Kinds that belong to no namespace; every other kind this knows is namespaced.
CLUSTER_SCOPED = {"Namespace", "Node", "ClusterRole", "ClusterRoleBinding", "PriorityClass",
                  "PersistentVolume", "StorageClass", "CustomResourceDefinition"}
# Plurals that are not the kind in lower case plus "s".
PLURALS = {"PriorityClass": "priorityclasses", "StorageClass": "storageclasses", "Ingress": "ingresses",
           "NetworkPolicy": "networkpolicies", "PodSecurityPolicy": "podsecuritypolicies",
           "Endpoints": "endpoints"}


def documents(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p)
                            if f.endswith((".yaml", ".yml", ".json")))
        else:
            files.append(p)
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for i, doc in enumerate(yaml.safe_load_all(fh)):
                if doc is None:
                    continue
                if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
                    raise SystemExit(f"{f}: document {i + 1} is not a Kubernetes object")
                if doc["kind"] == "List":
                    for item in doc.get("items", []):
                        yield f, item
                else:
                    yield f, doc


def collection(obj):
    """The REST path of the object's collection (where it is POSTed)."""
    kind, api = obj["kind"], obj["apiVersion"]
    base = "/api/v1" if api == "v1" else f"/apis/{api}"
    plural = PLURALS.get(kind, kind.lower() + "s")
    if kind in CLUSTER_SCOPED:
        return f"{base}/{plural}"
    ns = obj.get("metadata", {}).get("namespace", "default")
    return f"{base}/namespaces/{ns}/{plural}"


def describe(obj):
    m = obj.get("metadata", {})
    name = m.get("name", "?")
    return f"{obj['kind']} {m['namespace'] + '/' if 'namespace' in m else ''}{name}"


class Api:
    def __init__(self, server, token, cacert):
        self.server = server.rstrip("/")
        self.token = token
        self.ctx = ssl.create_default_context(cafile=cacert)

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method,
                                     headers={"Authorization": f"Bearer {self.token}",
                                              "Content-Type": "application/json",
                                              "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=30) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, {"message": raw.decode(errors="replace")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--server")
    ap.add_argument("--token-file")
    ap.add_argument("--cacert")
    ap.add_argument("--kinds", default="")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--print", action="store_true", dest="print_only")
    a = ap.parse_args()
    kinds = {k for k in a.kinds.split(",") if k}
    objects = [(f, o) for f, o in documents(a.paths) if not kinds or o["kind"] in kinds]
    if kinds - {o["kind"] for _, o in objects}:
        raise SystemExit(f"apply.py: no object of kind {', '.join(sorted(kinds - {o['kind'] for _, o in objects}))}")
    if a.print_only:
        for f, o in objects:
            print(json.dumps({"file": f, "path": collection(o), "object": o}))
        return 0
    if not (a.server and a.token_file and a.cacert):
        raise SystemExit("apply.py: --server, --token-file and --cacert are needed (or --print)")
    with open(a.token_file, encoding="utf-8") as fh:
        api = Api(a.server, fh.read().strip(), a.cacert)
    query = {}
    if a.strict:
        query["fieldValidation"] = "Strict"
    if a.dry_run:
        query["dryRun"] = "All"
    q = ("?" + urllib.parse.urlencode(query)) if query else ""
    failed = 0
    for f, o in objects:
        path = collection(o)
        code, reply = api.call("POST", path + q, o)
        what = "created"
        if code == 409 and reply.get("reason") == "AlreadyExists":
            item = f"{path}/{o['metadata']['name']}"
            code, current = api.call("GET", item)
            if code == 200:
                o = json.loads(json.dumps(o))
                o["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                code, reply = api.call("PUT", item + q, o)
                what = "replaced"
        if code in (200, 201):
            print(f"{describe(o)} {what}{' (dry run)' if a.dry_run else ''}")
        else:
            failed += 1
            print(f"{describe(o)} ({f}) refused: HTTP {code}: {reply.get('message', reply)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
