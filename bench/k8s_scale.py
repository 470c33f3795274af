#!/usr/bin/env python3
"""The load and the measurements of bench/k8s_scale.sh (which starts the test
bed and tide, and stops them): submits gangs of pods in waves to the test
bed's API server, watches pods and nodes, scrapes tide's /metrics and /proc,
and prints and writes the figures. Standard library only.

  k8s_scale.py --dir DIR --tide-pid PID --tide-port PORT --out FILE.json
               [--nodes 1000] [--pods 10000] [--waves 10] [--wave-interval 30]
               [--kind pods|jobs] [--threads 8] [--seed 36]
"""
import argparse
import http.client
import json
import math
import os
import random
import re
import ssl
import sys
import threading
import time

GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
TOTAL_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"
T0 = time.monotonic()


def now_ms():
    return (time.monotonic() - T0) * 1000.0


def log(msg):
    print(f"[{now_ms() / 1000:7.1f}s] {msg}", flush=True)


def pct(values, q):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]


def summary(values):
    return {"count": len(values), "p50": pct(values, 0.50), "p99": pct(values, 0.99),
            "max": max(values) if values else None, "mean": sum(values) / len(values) if values else None}


class Api:
    """The test bed's API server over keep-alive HTTPS (one connection per
    thread: http.client connections are not thread-safe)."""

    def __init__(self, env):
        m = re.match(r"https://([^:/]+):(\d+)", env["K8S_API"])
        self.host, self.port = m.group(1), int(m.group(2))
        self.ctx = ssl.create_default_context(cafile=env["K8S_CA_FILE"])
        with open(env["K8S_TOKEN_FILE"]) as f:
            self.token = f.read().strip()
        self.local = threading.local()

    def connect(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def headers(self):
        return {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                "Accept": "application/json", "User-Agent": "tide-bench-k8s-scale"}

    def call(self, method, path, body=None):
        for attempt in range(5):
            c = getattr(self.local, "conn", None)
            if c is None:
                c = self.local.conn = self.connect()
            try:
                c.request(method, path, body=json.dumps(body) if body is not None else None, headers=self.headers())
                r = c.getresponse()
                data = r.read()
                if r.status == 429 or r.status >= 500:
                    time.sleep(0.2 * (attempt + 1))
                    continue
                return r.status, data
            except (OSError, http.client.HTTPException):
                c.close()
                self.local.conn = None
                time.sleep(0.2 * (attempt + 1))
        return 0, b""


# ---------------------------------------------------------------- the load

def make_gangs(args):
    """Gangs of 1-16 pods, 1-8 GPUs a pod, in waves; exactly args.pods pods."""
    rng = random.Random(args.seed)
    sizes, size_w = [1, 2, 4, 8, 16], [30, 25, 20, 15, 10]
    gpus, gpus_w = [1, 2, 4, 8], [20, 20, 30, 30]
    per_wave = [args.pods // args.waves + (1 if w < args.pods % args.waves else 0) for w in range(args.waves)]
    gangs = []
    for w, n in enumerate(per_wave):
        left = n
        while left > 0:
            size = min(rng.choices(sizes, size_w)[0], left)
            left -= size
            gangs.append({"name": f"w{w}-g{len(gangs)}", "wave": w, "pods": size, "gpus": rng.choices(gpus, gpus_w)[0]})
    return gangs, per_wave


def pod_body(g, i, after):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{g['name']}-{i}", "labels": {GROUP_LABEL: g["name"]},
                         "annotations": {TOTAL_ANNOTATION: str(g["pods"]), "tide.dev/complete-after": after}},
            "spec": {"schedulerName": "tide", "restartPolicy": "Never",
                     "containers": [{"name": "train", "image": "train:latest",
                                     "resources": {"requests": {"nvidia.com/gpu": str(g["gpus"])},
                                                   "limits": {"nvidia.com/gpu": str(g["gpus"])}}}]}}


def job_body(g, after):
    pod = pod_body(g, 0, after)
    del pod["metadata"]["name"]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": g["name"]},
            "spec": {"parallelism": g["pods"], "completions": g["pods"], "backoffLimit": 100,
                     "template": {"metadata": pod["metadata"], "spec": pod["spec"]}}}


class Submitter:
    def __init__(self, api, args, after):
        self.api, self.args, self.after = api, args, after
        self.lock = threading.Lock()
        self.errors = []
        self.posted_pods = 0

    def post_gang(self, g):
        if self.args.kind == "jobs":
            reqs = [("/apis/batch/v1/namespaces/default/jobs", job_body(g, self.after))]
        else:
            reqs = [("/api/v1/namespaces/default/pods", pod_body(g, i, self.after)) for i in range(g["pods"])]
        for path, body in reqs:
            code, data = self.api.call("POST", path, body)
            if code != 201:
                with self.lock:
                    self.errors.append(f"{g['name']}: HTTP {code}: {data[:200]!r}")
        g["posted_ms"] = now_ms()
        with self.lock:
            self.posted_pods += g["pods"]

    def post_all(self, gangs):
        """Posts the gangs with args.threads threads (keep-alive connections)."""
        it = iter(gangs)
        it_lock = threading.Lock()

        def worker():
            while True:
                with it_lock:
                    g = next(it, None)
                if g is None:
                    return
                self.post_gang(g)

        ts = [threading.Thread(target=worker, daemon=True) for _ in range(self.args.threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()


# ---------------------------------------------------------------- watches

class Watch(threading.Thread):
    """GET <path>?watch=1 from a list's resourceVersion, line by line; every
    event stamped with now_ms() on arrival; resumes from the last version."""

    def __init__(self, api, path, handler, stop):
        super().__init__(daemon=True)
        self.api, self.path, self.handler, self.stop = api, path, handler, stop
        self.rv = None
        self.events = 0
        self.restarts = 0
        sep = "&" if "?" in path else "?"
        code, data = api.call("GET", f"{path}{sep}limit=1")
        if code != 200:
            raise SystemExit(f"list {path}: HTTP {code}")
        self.rv = json.loads(data)["metadata"]["resourceVersion"]

    def run(self):
        sep = "&" if "?" in self.path else "?"
        while not self.stop.is_set():
            c = self.api.connect(timeout=120)
            try:
                c.request("GET", f"{self.path}{sep}watch=1&allowWatchBookmarks=true&resourceVersion={self.rv}"
                          f"&timeoutSeconds=600", headers=self.api.headers())
                r = c.getresponse()
                if r.status != 200:
                    log(f"watch {self.path}: HTTP {r.status}: {r.read()[:200]!r}")
                    time.sleep(1)
                    continue
                while not self.stop.is_set():
                    line = r.readline()
                    if not line:
                        break
                    t = now_ms()
                    ev = json.loads(line)
                    if ev["type"] == "ERROR":
                        log(f"watch {self.path}: ERROR {ev['object'].get('message')}; the figures may miss events")
                        code, data = self.api.call("GET", f"{self.path}{sep}limit=1")
                        self.rv = json.loads(data)["metadata"]["resourceVersion"]
                        break
                    self.rv = ev["object"]["metadata"]["resourceVersion"]
                    self.events += 1
                    if ev["type"] != "BOOKMARK":
                        self.handler(ev["type"], ev["object"], t)
            except (OSError, http.client.HTTPException, ValueError) as e:
                if not self.stop.is_set():
                    log(f"watch {self.path}: {e!r}; resuming")
                    time.sleep(0.5)
            finally:
                c.close()
            self.restarts += 1


class Cluster:
    """What the watches saw: per pod, per node; guarded by one lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.pods = {}   # name -> dict(group, added, bound, node, node_added, done)
        self.nodes = {}  # name -> dict(added, ready, deleted) of the current incarnation
        self.node_history = []  # finished incarnations
        self.alive = 0
        self.peak = 0
        self.peak_ms = 0.0
        self.created = 0
        self.deleted = 0
        self.ready_lag = []  # node ADDED -> Ready, ms

    def on_pod(self, typ, o, t):
        meta = o["metadata"]
        group = meta.get("labels", {}).get(GROUP_LABEL)
        if group is None:
            return
        name = meta["name"]
        with self.lock:
            p = self.pods.get(name)
            if p is None:
                p = self.pods[name] = {"group": group, "added": t, "bound": None, "node": None, "node_added": None,
                                       "done": None}
            node = o.get("spec", {}).get("nodeName")
            if node and p["bound"] is None:
                p["bound"], p["node"] = t, node
                n = self.nodes.get(node)
                p["node_added"] = n["added"] if n else None
            if p["done"] is None and o.get("status", {}).get("phase") in ("Succeeded", "Failed"):
                p["done"] = t

    def on_node(self, typ, o, t):
        name = o["metadata"]["name"]
        with self.lock:
            if typ == "ADDED":
                self.nodes[name] = {"added": t, "ready": None}
                self.alive += 1
                self.created += 1
                if self.alive > self.peak:
                    self.peak, self.peak_ms = self.alive, t
            elif typ == "DELETED":
                n = self.nodes.pop(name, None)
                if n is not None:
                    self.alive -= 1
                    self.deleted += 1
                    self.node_history.append(n)
            else:
                n = self.nodes.get(name)
                if n is not None and n["ready"] is None:
                    for c in o.get("status", {}).get("conditions", []):
                        if c.get("type") == "Ready" and c.get("status") == "True":
                            n["ready"] = t
                            self.ready_lag.append(t - n["added"])


# ---------------------------------------------------------------- tide's side

def read_status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0]) * 1024
    except OSError:
        pass
    return out


def thread_cpu_s(pid, tid):
    try:
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


METRIC_RE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)')


def parse_metrics(text, names):
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = METRIC_RE.match(line)
        if m and m.group(1) in names:
            try:
                out[(m.group(1), m.group(2) or "")] = float(m.group(3))
            except ValueError:
                pass
    return out


class Scraper(threading.Thread):
    """tide's /metrics every `period` seconds (a loop's end is seen within
    one period), its memory every second; the API server's request counters
    every 5 s, as the fallback when tide has no request counters."""

    def __init__(self, args, api, pids, stop):
        super().__init__(daemon=True)
        self.args, self.api, self.pids, self.stop = args, api, pids, stop
        self.period = 0.25
        self.loops = []  # (t_ms, loops_total, duration metric or None, main-thread CPU s)
        self.requests = []  # (t_ms, {verb: count}) from tide_kube_requests_total
        self.rss = []  # (t_ms, tide VmRSS)
        self.apiserver = []  # (t_ms, {(verb, resource, subresource): count})
        self.has_duration = False
        self.has_requests = False
        self.scrapes = 0
        self.scrape_errors = 0
        self.last_loops = None
        self.last_duration = None
        self.durations = []  # (t_ms, tide_loop_duration_seconds), one a loop

    def scrape_tide(self):
        c = http.client.HTTPConnection("127.0.0.1", self.args.tide_port, timeout=10)
        try:
            c.request("GET", "/metrics")
            r = c.getresponse()
            text = r.read().decode()
        finally:
            c.close()
        return parse_metrics(text, {"tide_loops_total", "tide_loop_duration_seconds", "tide_kube_requests_total"})

    def scrape_apiserver(self):
        code, data = self.api.call("GET", "/metrics")
        if code != 200:
            return None
        out = {}
        for line in data.decode().splitlines():
            if not line.startswith("apiserver_request_total{"):
                continue
            m = METRIC_RE.match(line)
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            key = (labels.get("verb", ""), labels.get("resource", ""), labels.get("subresource", ""))
            out[key] = out.get(key, 0) + float(m.group(3))
        return out

    def run(self):
        next_mem = next_api = 0.0
        while not self.stop.is_set():
            t = now_ms()
            try:
                m = self.scrape_tide()
                self.scrapes += 1
                loops = m.get(("tide_loops_total", ""))
                dur = m.get(("tide_loop_duration_seconds", ""))
                self.has_duration |= dur is not None
                # tide sets the duration after the loop that counts it: take
                # each new value of the gauge as one loop's.
                if dur is not None and dur != self.last_duration:
                    self.last_duration = dur
                    self.durations.append((t, dur))
                if loops is not None and loops != self.last_loops:
                    self.last_loops = loops
                    self.loops.append((t, loops, dur, thread_cpu_s(self.args.tide_pid, self.args.tide_pid)))
                verbs = {}
                for (name, labels), v in m.items():
                    if name == "tide_kube_requests_total":
                        vm = re.search(r'(?:verb|kind)="([^"]*)"', labels)
                        verbs[vm.group(1) if vm else labels] = verbs.get(vm.group(1) if vm else labels, 0) + v
                if verbs:
                    self.has_requests = True
                    self.requests.append((t, verbs))
            except (OSError, http.client.HTTPException, ValueError):
                self.scrape_errors += 1
            if t >= next_mem:
                next_mem = t + 1000
                s = read_status(self.args.tide_pid)
                if "VmRSS" in s:
                    self.rss.append((t, s["VmRSS"]))
            if t >= next_api:
                next_api = t + 5000
                a = self.scrape_apiserver()
                if a is not None:
                    self.apiserver.append((now_ms(), a))
            self.stop.wait(self.period)


# ---------------------------------------------------------------- analysis

def rates(samples, window_ms=5000):
    """Mean and peak requests/s from (t, {key: counter}) samples."""
    if len(samples) < 2:
        return None
    tot = [(t, sum(v.values())) for t, v in samples]
    mean = (tot[-1][1] - tot[0][1]) / ((tot[-1][0] - tot[0][0]) / 1000)
    # Over the shortest span of at least window_ms that ends at each sample.
    peak, j = 0.0, 0
    for i in range(len(tot)):
        while j + 1 < i and tot[i][0] - tot[j + 1][0] >= window_ms:
            j += 1
        if i > j and tot[i][0] - tot[j][0] >= window_ms:
            peak = max(peak, (tot[i][1] - tot[j][1]) / ((tot[i][0] - tot[j][0]) / 1000))
    return {"mean_per_s": mean, "peak_per_s_5s": peak, "total": tot[-1][1] - tot[0][1]}


def analyse(args, gangs, cluster, scraper, wall_s, interval_s, pids):
    res = {"scale": {"target_nodes": args.nodes, "pods": args.pods, "gangs": len(gangs), "waves": args.waves,
                     "wave_interval_s": args.wave_interval, "kind": args.kind, "complete_after": args.complete_after},
           "wall_s": wall_s}
    by_gang = {}
    with cluster.lock:
        for p in cluster.pods.values():
            by_gang.setdefault(p["group"], []).append(p)
        peak, n_created, deleted = cluster.peak, cluster.created, cluster.deleted
        ready_lag = list(cluster.ready_lag)
    to_create, to_create_first, to_bound, to_bound_new, to_bound_old, visible_lag = [], [], [], [], [], []
    unbound, partial = 0, 0
    for g in gangs:
        pods = by_gang.get(g["name"], [])
        if len(pods) < g["pods"]:
            unbound += 1
            continue
        # The gang is pending once the harness posted it and all its pods exist.
        created = max(g.get("posted_ms", 0.0), max(p["added"] for p in pods))
        visible_lag.append(max(p["added"] for p in pods) - g.get("posted_ms", 0.0))
        bound = [p["bound"] for p in pods]
        if any(b is None for b in bound):
            unbound += 1
            if any(b is not None for b in bound):
                partial += 1
            continue
        to_bound.append(max(bound) - created)
        adds = [p["node_added"] for p in pods]
        if all(a is not None and a > created for a in adds):
            to_create.append(max(adds) - created)
            to_create_first.append(min(adds) - created)
            to_bound_new.append(max(bound) - created)
        else:
            to_bound_old.append(max(bound) - created)
    res["gangs"] = {"pending_to_create_ms": summary(to_create),
                    "pending_to_first_create_ms": summary(to_create_first),
                    "pending_to_bound_ms": summary(to_bound),
                    "pending_to_bound_new_nodes_ms": summary(to_bound_new),
                    "pending_to_bound_existing_nodes_ms": summary(to_bound_old),
                    "posted_to_all_pods_seen_ms": summary(visible_lag),
                    "not_bound_at_end": unbound, "bound_in_part_at_end": partial}
    res["nodes"] = {"peak": peak, "created": n_created, "deleted": deleted,
                    "added_to_ready_ms": summary(ready_lag)}
    # tide's loops: the metric when there is one, else the gap between two loop
    # ends seen less the loop interval (tide sleeps the interval in 0.1 s steps
    # after each loop; only right for a tide whose loop runs on its timer
    # alone, not on watch events), and the main thread's CPU time per loop.
    loops = scraper.loops
    durs, gaps, cpu = [], [], []
    durs = [d * 1000 for _, d in scraper.durations]
    for (t0, n0, _, c0), (t1, n1, d1, c1) in zip(loops, loops[1:]):
        if n1 - n0 == 1:
            gaps.append(max(0.0, t1 - t0 - interval_s * 1000 - 50))
            if c0 is not None and c1 is not None:
                cpu.append((c1 - c0) * 1000)
    res["loops"] = {"count": (loops[-1][1] - loops[0][1]) if loops else 0, "interval_s": interval_s,
                    "source": "tide_loop_duration_seconds" if scraper.has_duration else
                    "gap between loop ends seen on /metrics (every 0.25 s) less the interval",
                    "duration_ms": summary(durs if scraper.has_duration else gaps),
                    "from_gaps_ms": summary(gaps), "main_thread_cpu_ms": summary(cpu)}
    if scraper.has_requests:
        req = rates(scraper.requests)
        first, last = scraper.requests[0][1], scraper.requests[-1][1]
        by_verb = {k: last.get(k, 0) - first.get(k, 0) for k in last}
        lists = by_verb.get("list", 0)
        res["tide_requests"] = {"source": "tide_kube_requests_total", **(req or {}), "by_verb": by_verb,
                                "lists": lists, "loops": res["loops"]["count"]}
    else:
        res["tide_requests"] = {"source": "missing: tide has no tide_kube_requests_total"}
    if len(scraper.apiserver) >= 2:
        first, last = scraper.apiserver[0][1], scraper.apiserver[-1][1]
        d = {k: last.get(k, 0) - first.get(k, 0) for k in last}
        tide_only = [("POST", "pods", "binding"), ("POST", "nodes", ""), ("DELETE", "nodes", ""), ("PATCH", "nodes", "")]
        res["apiserver_requests"] = {
            "all_clients": rates(scraper.apiserver),
            "tide_only_kinds": rates([(t, {k: v.get(k, 0) for k in tide_only}) for t, v in scraper.apiserver]),
            "tide_only_kinds_by_kind": {"/".join(filter(None, k)): d.get(k, 0) for k in tide_only},
            "lists_all_clients": {"/".join(filter(None, k)): v for k, v in d.items() if k[0] == "LIST" and v},
            "watches_all_clients": sum(v for k, v in d.items() if k[0] == "WATCH"),
            "top_kinds_all_clients": {" ".join(filter(None, k)): v for k, v in
                                      sorted(d.items(), key=lambda kv: -kv[1])[:12] if v},
        }
    rss = [v for _, v in scraper.rss]
    mem = {"tide_peak_rss_sampled_bytes": max(rss) if rss else None}
    for name, pid in pids.items():
        s = read_status(pid)
        mem[f"{name}_VmHWM_bytes"] = s.get("VmHWM")
    res["memory"] = mem
    return res


def fmt_ms(v):
    return "-" if v is None else (f"{v / 1000:.2f} s" if v >= 1000 else f"{v:.0f} ms")


def mib(v):
    return "-" if v is None else f"{v / 2**20:.0f} MiB"


def table(res):
    rows = []

    def dist(label, s, target=None):
        rows.append((label, f"{s['count']}", fmt_ms(s["p50"]), fmt_ms(s["p99"]), fmt_ms(s["max"]), target or ""))
    g = res["gangs"]
    dist("pending gang -> create request (last of its nodes)", g["pending_to_create_ms"], "p99 < 1 s")
    dist("pending gang -> create request (first of its nodes)", g["pending_to_first_create_ms"])
    dist("pending gang -> bound (all gangs)", g["pending_to_bound_ms"])
    dist("  on nodes created for it", g["pending_to_bound_new_nodes_ms"])
    dist("  on nodes that were there", g["pending_to_bound_existing_nodes_ms"])
    dist("gang posted -> all its pods seen", g["posted_to_all_pods_seen_ms"])
    dist("node created -> Ready (boot delay)", res["nodes"]["added_to_ready_ms"])
    dist(f"tide loop ({res['loops']['source'].split(':')[0]})", res["loops"]["duration_ms"], "< 1 s")
    dist("tide loop, main thread CPU", res["loops"]["main_thread_cpu_ms"])
    w = max(len(r[0]) for r in rows)
    out = [f"{'what':<{w}}  {'count':>6}  {'p50':>9}  {'p99':>9}  {'max':>9}  target"]
    for r in rows:
        out.append(f"{r[0]:<{w}}  {r[1]:>6}  {r[2]:>9}  {r[3]:>9}  {r[4]:>9}  {r[5]}")
    out.append("")
    n = res["nodes"]
    out.append(f"nodes: peak {n['peak']}, created {n['created']}, deleted {n['deleted']}; gangs {res['scale']['gangs']}, "
               f"not bound at the end {g['not_bound_at_end']} (in part {g['bound_in_part_at_end']}); loops {res['loops']['count']}")
    tr = res["tide_requests"]
    if "mean_per_s" in tr:
        out.append(f"tide's API requests: {tr['mean_per_s']:.1f}/s mean, {tr['peak_per_s_5s']:.1f}/s peak (5 s); "
                   f"by verb {tr['by_verb']}; lists {tr['lists']:.0f} over {tr['loops']} loops")
    else:
        out.append(f"tide's API requests: {tr['source']}")
    a = res.get("apiserver_requests")
    if a:
        if a["all_clients"]:
            out.append(f"API server, all clients: {a['all_clients']['mean_per_s']:.1f}/s mean, "
                       f"{a['all_clients']['peak_per_s_5s']:.1f}/s peak (5 s)")
        if a["tide_only_kinds"]:
            out.append(f"API server, requests only tide makes ({a['tide_only_kinds_by_kind']}): "
                       f"{a['tide_only_kinds']['mean_per_s']:.1f}/s mean, {a['tide_only_kinds']['peak_per_s_5s']:.1f}/s peak (5 s)")
        out.append(f"API server LISTs, all clients: {a['lists_all_clients']}; watches opened {a['watches_all_clients']:.0f}")
        out.append("API server, most requests (all clients): " +
                   ", ".join(f"{k} {v:.0f}" for k, v in a["top_kinds_all_clients"].items()))
    m = res["memory"]
    out.append("memory: " + ", ".join(f"{k.replace('_bytes', '')} {mib(v)}" for k, v in m.items()))
    out.append(f"wall {res['wall_s']:.0f} s")
    return "\n".join(out)


# ---------------------------------------------------------------- main

def read_env(d):
    env = {}
    with open(os.path.join(d, "env")) as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            if k:
                env[k] = v
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--tide-pid", type=int, required=True)
    ap.add_argument("--tide-port", type=int, required=True)
    ap.add_argument("--loop-interval", type=float, default=2.0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--waves", type=int, default=10)
    ap.add_argument("--wave-interval", type=float, default=30.0)
    ap.add_argument("--complete-after", default="", help="default: sized for the peak (see below)")
    ap.add_argument("--kind", choices=["pods", "jobs"], default="pods")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--max-wait", type=float, default=900.0, help="after the last wave, for every gang to end")
    args = ap.parse_args()

    env = read_env(args.dir)
    api = Api(env)
    pids = {}
    with open(os.path.join(args.dir, "pids")) as f:
        for line in f:
            n, p = line.split()
            pids[n] = int(p)
    pids["tide"] = args.tide_pid

    gangs, per_wave = make_gangs(args)
    gpus = sum(g["pods"] * g["gpus"] for g in gangs)
    wave_gpus = gpus / args.waves
    # Each wave needs about wave_gpus / 8 nodes. Pods run long enough that
    # nodes*8/wave_gpus waves overlap: about args.nodes nodes at the peak.
    if not args.complete_after:
        overlap = args.nodes * 8 / wave_gpus
        args.complete_after = f"{max(5, round(overlap * args.wave_interval))}s"
    log(f"{len(gangs)} gangs, {args.pods} pods, {gpus} GPUs in {args.waves} waves of ~{wave_gpus:.0f} GPUs "
        f"(~{wave_gpus / 8:.0f} 8-GPU nodes) every {args.wave_interval:g} s; pods run {args.complete_after}; "
        f"aiming at ~{args.nodes} nodes at the peak; {args.threads} threads post {args.kind}")

    stop = threading.Event()
    cluster = Cluster()
    watches = [Watch(api, "/api/v1/nodes", cluster.on_node, stop),
               Watch(api, f"/api/v1/namespaces/default/pods?labelSelector={GROUP_LABEL}", cluster.on_pod, stop)]
    for w in watches:
        w.start()
    scraper = Scraper(args, api, pids, stop)
    scraper.start()
    sub = Submitter(api, args, args.complete_after)
    t_start = now_ms()
    last_progress = [0.0]

    def progress(tag=""):
        with cluster.lock:
            seen = len(cluster.pods)
            bound = sum(1 for p in cluster.pods.values() if p["bound"] is not None)
            done = sum(1 for p in cluster.pods.values() if p["done"] is not None)
            alive, peak = cluster.alive, cluster.peak
        lp = scraper.loops[-1] if scraper.loops else None
        rss = scraper.rss[-1][1] if scraper.rss else None
        log(f"{tag}posted {sub.posted_pods}/{args.pods} pods, seen {seen}, bound {bound}, ended {done}; "
            f"nodes {alive} (peak {peak}); tide loops {int(lp[1]) if lp else '-'}, RSS {mib(rss)}")
        last_progress[0] = now_ms()
        return bound, done, alive

    for w in range(args.waves):
        due = t_start + w * args.wave_interval * 1000
        while now_ms() < due:
            if now_ms() - last_progress[0] > 10000:
                progress()
            time.sleep(min(1.0, max(0.0, (due - now_ms()) / 1000)))
        t = now_ms()
        wave = [g for g in gangs if g["wave"] == w]
        sub.post_all(wave)
        log(f"wave {w + 1}/{args.waves}: {per_wave[w]} pods in {len(wave)} gangs posted in {(now_ms() - t) / 1000:.1f} s"
            + (f"; {len(sub.errors)} errors, first: {sub.errors[0]}" if sub.errors else ""))
        if now_ms() - t > args.wave_interval * 1000:
            log(f"  (posting took longer than the wave interval)")
    deadline = now_ms() + args.max_wait * 1000
    while now_ms() < deadline:
        bound, done, alive = progress("waiting: ")
        if done >= args.pods and alive == 0:
            break
        time.sleep(10)
    wall_s = (now_ms() - t_start) / 1000
    time.sleep(1.0)  # a last scrape
    stop.set()
    scraper.join(timeout=15)
    res = analyse(args, gangs, cluster, scraper, wall_s, args.loop_interval, pids)
    res["submission_errors"] = sub.errors[:20]
    res["watch_events"] = {w.path: w.events for w in watches}
    res["scrapes"] = {"tide_metrics": scraper.scrapes, "errors": scraper.scrape_errors,
                      "has_loop_duration": scraper.has_duration, "has_request_counters": scraper.has_requests}
    with open(args.out, "w") as f:
        json.dump(res, f, indent=2)
    print()
    print(table(res))
    print(f"\nfigures written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
