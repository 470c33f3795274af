#!/usr/bin/env python3
"""The Kubernetes crash soak's record of the cluster (tests/integration/k8s/soak.sh).

  soak_watch.py watch PATH OUT     follow a watch on the API server (K8S_API,
                                   K8S_TOKEN_FILE, K8S_CA_FILE from the test
                                   bed's env) and append one line per event to
                                   OUT: "TIME TYPE NAME UID CREATED KEY JOB";
                                   reconnects from the last resourceVersion
  soak_watch.py intervals LOG      the kwok provider's instances as the cluster
                                   saw them, from a Node watch's LOG: "ID NODE
                                   START END" (END "-" while live): ID the
                                   provider's (kwok://NAME/UID), START the
                                   node's tide.dev/created, END when its DELETED
                                   event came
  soak_watch.py keys LOG           "VIOLATION bought_twice ..." for every
                                   idempotency key more than one Node had
  soak_watch.py pods LOG JOB PODS  "VIOLATION protected ..." when JOB's pods were
                                   made more than PODS times (one was evicted)
"""
import datetime
import json
import os
import ssl
import sys
import time
import urllib.request


def watch(path, out):
    api = os.environ["K8S_API"]
    token = open(os.environ["K8S_TOKEN_FILE"]).read().strip()
    ctx = ssl.create_default_context(cafile=os.environ["K8S_CA_FILE"])
    rv = ""
    with open(out, "a", buffering=1) as f:
        while True:
            sep = "&" if "?" in path else "?"
            url = f"{api}{path}{sep}watch=1" + (f"&resourceVersion={rv}" if rv else "")
            try:
                req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
                with urllib.request.urlopen(req, context=ctx, timeout=400) as r:
                    for line in r:
                        ev = json.loads(line)
                        obj = ev.get("object", {})
                        md = obj.get("metadata", {})
                        if ev.get("type") == "ERROR":
                            rv = ""  # too old: start again from a fresh list (ADDED for what exists)
                            f.write(f"{time.time():.3f} WATCHERROR {obj.get('message', '?').replace(' ', '_')}\n")
                            break
                        rv = md.get("resourceVersion", rv)
                        ann = md.get("annotations") or {}
                        labels = md.get("labels") or {}
                        f.write("%.3f %s %s %s %s %s %s\n" % (
                            time.time(), ev.get("type"), md.get("name", "-"), md.get("uid", "-"),
                            ann.get("tide.dev/created", "-"), ann.get("tide.dev/idempotency-key", "-"),
                            labels.get("kueue.x-k8s.io/pod-group-name", "-")))
            except Exception as e:  # the server ends watches; reconnect
                f.write(f"{time.time():.3f} WATCHERROR {type(e).__name__}\n")
                time.sleep(0.5)


def events(log):
    with open(log) as f:
        for line in f:
            p = line.split()
            if len(p) == 7 and p[1] in ("ADDED", "MODIFIED", "DELETED"):
                yield float(p[0]), p[1], p[2], p[3], p[4], p[5], p[6]


def unix(rfc3339):
    return int(datetime.datetime.strptime(rfc3339, "%Y-%m-%dT%H:%M:%SZ")
               .replace(tzinfo=datetime.timezone.utc).timestamp())


def intervals(log):
    by_uid, order = {}, []
    for t, kind, name, uid, created, _key, _job in events(log):
        if uid not in by_uid:
            start = unix(created) if created != "-" else int(t)
            by_uid[uid] = {"name": name, "start": start, "end": None}
            order.append(uid)
        if kind == "DELETED":
            by_uid[uid]["end"] = int(t)
    for uid in order:
        n = by_uid[uid]
        end = "-" if n["end"] is None else str(n["end"])
        print("kwok://%s/%s" % (n["name"], uid), n["name"], n["start"], end)


def keys(log):
    uids = {}
    for _t, _kind, name, uid, _created, key, _job in events(log):
        if key != "-":
            uids.setdefault(key, {})[uid] = name
    for key, named in sorted(uids.items()):
        if len(named) > 1:
            print(f"VIOLATION bought_twice key:{key} the create with key {key} made {len(named)} Nodes: "
                  + ", ".join(sorted(named.values())))


def pods(log, job, count):
    names = {name for _t, kind, name, _uid, _c, _k, j in events(log) if j == job and kind == "ADDED"}
    if len(names) > count:
        print(f"VIOLATION protected pods:{job} protected job {job} had {len(names)} pods made for its {count} "
              f"(one was stopped and made again): {' '.join(sorted(names))}")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "watch" and len(sys.argv) == 4:
        watch(sys.argv[2], sys.argv[3])
    elif cmd == "intervals" and len(sys.argv) == 3:
        intervals(sys.argv[2])
    elif cmd == "keys" and len(sys.argv) == 3:
        keys(sys.argv[2])
    elif cmd == "pods" and len(sys.argv) == 5:
        pods(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)
