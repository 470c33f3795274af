#!/usr/bin/env python3
"""fake_cloud.py ENV-FILE STATE-FILE create|delete|list: a stand-in cloud for
the exec provider on the Kubernetes test bed (tests/integration/k8s/exec_cloud.sh).

It speaks the exec provider's protocol (docs/providers.md): one JSON object on
stdin, one on stdout. Like a real cloud's machine, a created instance picks its
own id ("vm-N") and its node joins the cluster by itself under a name of the
cloud's ("ip-10-0-0-N"), with spec.providerID "fake:///zone-a/vm-N" and the
pool's labels (as kubelet --node-labels would set them), not under the name
tide asked for. kwok makes the Node Ready. The instance records (with the name
tide asked for as "node", as a tag would keep it) live in STATE-FILE.

create is idempotent on idempotency_key; delete of an unknown id succeeds.
Deleting a machine does not delete its Node object: that is tide's to do.
"""
import fcntl
import json
import os
import ssl
import sys
import time
import urllib.request


def env(path):
    out = {}
    with open(path) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                out[k] = v
    return out


def api(e, method, path, body=None):
    ctx = ssl.create_default_context(cafile=e["K8S_CA_FILE"])
    with open(e["K8S_TOKEN_FILE"]) as f:
        token = f.read().strip()
    req = urllib.request.Request(e["K8S_API"] + path, method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
        return json.load(r)


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("create", "delete", "list"):
        sys.exit("usage: fake_cloud.py ENV-FILE STATE-FILE create|delete|list")
    e, state_path, verb = env(sys.argv[1]), sys.argv[2], sys.argv[3]
    req = json.load(sys.stdin)
    with open(state_path, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lock.seek(0)
        text = lock.read()
        state = json.loads(text) if text.strip() else {"next": 1, "instances": []}
        if verb == "list":
            print(json.dumps({"instances": state["instances"]}))
            return
        if verb == "delete":
            state["instances"] = [i for i in state["instances"] if i["id"] != req["id"]]
        else:
            for i in state["instances"]:
                if i["idempotency_key"] == req["idempotency_key"]:
                    print(json.dumps(i))
                    return
            n = state["next"]
            state["next"] = n + 1
            vm, name = "vm-%d" % n, "ip-10-0-0-%d" % n
            capacity = {"nvidia.com/gpu": "8", "cpu": "96", "memory": "1024Gi", "pods": "110"}
            api(e, "POST", "/api/v1/nodes", {
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name,
                             "labels": {"tide.dev/pool": req["pool"], "karpenter.sh/capacity-type": "on-demand",
                                        "type": "kwok"},
                             "annotations": {"kwok.x-k8s.io/node": "fake"}},
                "spec": {"providerID": "fake:///zone-a/" + vm},
                "status": {"capacity": capacity, "allocatable": capacity}})
            inst = {"id": vm, "node": req["node"], "pool": req["pool"], "state": "running",
                    "idempotency_key": req["idempotency_key"], "created": int(time.time())}
            state["instances"].append(inst)
            print(json.dumps(inst))
        lock.seek(0)
        lock.truncate()
        lock.write(json.dumps(state))


if __name__ == "__main__":
    main()
