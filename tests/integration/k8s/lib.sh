#!/usr/bin/env bash
# Shared by the tests that run `tide run` on the Kubernetes test bed: each
# starts its own test bed (scripts/k8s-testbed) and its own tide in a
# temporary folder, and stops both by PID at the end, failing if anything
# is left running. Exit 77 (skipped) when the test bed cannot be built here.
#
#   . "$(dirname "$0")/lib.sh"; k8s_init NAME; k8s_start; tide_config ...; tide_start
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
TB=$ROOT/scripts/k8s-testbed
TIDE=${TIDE:-$ROOT/build/test/tide}
PASS=0 FAIL=0
T0=$(date +%s.%N)
el() { awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
ok() { PASS=$((PASS + 1)); echo "[$(el)s] PASS $*"; }
bad() { FAIL=$((FAIL + 1)); echo "[$(el)s] FAIL $*"; }
note() { echo "[$(el)s] $*"; }
# wait_for SECONDS COMMAND: true once COMMAND succeeds, false after SECONDS.
wait_for() {
  local end=$(($(date +%s) + $1))
  while [ "$(date +%s)" -le "$end" ]; do
    if eval "$2" > /dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  return 1
}

# Exits 77 (skipped) when the test bed cannot run here; builds it if need be
# (nothing when it is built).
k8s_require() {
  if [ -n "${TIDE_K8S_SKIP:-}" ]; then echo "SKIP: $TIDE_K8S_SKIP"; exit 77; fi
  for p in curl openssl python3; do
    command -v "$p" >/dev/null || { echo "SKIP: $p is not installed (scripts/deps installs it)"; exit 77; }
  done
  if ! "$TB" build; then
    command -v go >/dev/null || { echo "SKIP: the test bed is not built and Go is missing (see scripts/k8s-testbed)"; exit 77; }
    exit 1
  fi
}

k8s_init() {
  k8s_require
  DIR=$(mktemp -d "${TMPDIR:-/tmp}/tide-k8s-$1.XXXXXX")
  mkdir -p "$DIR/tide"
  trap k8s_finish EXIT
}

k8s_finish() {
  local rc=$?
  if [ -n "${TIDE_PID:-}" ] && kill -0 "$TIDE_PID" 2>/dev/null; then
    kill -TERM "$TIDE_PID" 2>/dev/null || true
    wait_for 15 '! kill -0 "$TIDE_PID" 2>/dev/null' || { bad "tide (PID $TIDE_PID) did not stop on SIGTERM"; kill -KILL "$TIDE_PID" 2>/dev/null || true; }
  fi
  local n p
  while read -r n p; do
    kill -TERM "$p" 2>/dev/null || continue
    wait_for 10 '! kill -0 "$p" 2>/dev/null' || { bad "$n (PID $p) did not stop on SIGTERM"; kill -KILL "$p" 2>/dev/null || true; }
  done < <(cat "$DIR/helper-pids" 2>/dev/null)
  if [ -f "$DIR/pids" ] && ! "$TB" stop "$DIR" > /dev/null; then bad "test bed processes left running"; fi
  if [ "$FAIL" -gt 0 ] || [ "$rc" -ne 0 ]; then
    echo "--- tail of tide's log"; tail -n 40 "$DIR/tide/tide.log" 2>/dev/null || true
    for f in "$DIR"/logs/*.log; do [ -f "$f" ] && { echo "--- tail of $f"; tail -n 10 "$f"; }; done
  fi
  if [ -z "${KEEP:-}" ]; then rm -rf "$DIR"; else echo "kept $DIR"; fi
  echo "$PASS passed, $FAIL failed"
  if [ "$FAIL" -gt 0 ] && [ "$rc" -eq 0 ]; then rc=1; fi
  exit "$rc"
}

# helper_start NAME PROGRAM ARGS...: a test's own process (a fake exporter,
# a proxy, Prometheus), logged to $DIR/logs/NAME.log and stopped by PID at
# the end.
helper_start() {
  local name=$1
  shift
  mkdir -p "$DIR/logs"
  "$@" >> "$DIR/logs/$name.log" 2>&1 &
  echo "$name $!" >> "$DIR/helper-pids"
}

k8s_start() {
  "$TB" start "$DIR" > "$DIR/testbed.log" 2>&1 || { cat "$DIR/testbed.log"; bad "test bed did not start"; exit 1; }
  # shellcheck disable=SC1091
  . "$DIR/env"
  TOKEN=$(cat "$K8S_TOKEN_FILE")
  NS=default
  # Pods are refused until the namespace's default ServiceAccount exists.
  wait_for 20 'api GET /api/v1/namespaces/default/serviceaccounts/default; [ "$CODE" = 200 ]' || bad "no default ServiceAccount"
}

# api METHOD PATH [BODY [CONTENT-TYPE]]: sets CODE and BODY.
api() {
  CODE=$(curl -sS -o "$DIR/body" -w '%{http_code}' -X "$1" --cacert "$K8S_CA_FILE" \
    -H "Authorization: Bearer $TOKEN" -H "Content-Type: ${4:-application/json}" \
    ${3:+--data-binary "$3"} "$K8S_API$2") || CODE=000
  BODY=$(cat "$DIR/body")
}
# jget PYTHON-EXPR: evaluates EXPR on the JSON in BODY, as `d`.
jget() { printf '%s' "$BODY" | python3 -c 'import json, sys
d = json.load(sys.stdin)
try: v = eval(sys.argv[1])
except (KeyError, IndexError, TypeError): v = ""
print(v if not isinstance(v, (list, dict)) else json.dumps(v))' "$1"; }

# gang_job NAME PODS GPUS [COMPLETE-AFTER [PRIORITY-CLASS [EXTRA-ANNOTATIONS-JSON]]]:
# a batch/v1 Job whose PODS pods are one Kueue plain-pod group (a gang), each
# asking for GPUS GPUs, with schedulerName tide; kwok completes each pod
# COMPLETE-AFTER after it runs.
gang_job() {
  api POST "/apis/batch/v1/namespaces/$NS/jobs" "$(python3 - "$@" <<'PY'
import json, sys
name, pods, gpus = sys.argv[1], int(sys.argv[2]), sys.argv[3]
after = sys.argv[4] if len(sys.argv) > 4 else "1h"
cls = sys.argv[5] if len(sys.argv) > 5 else ""
extra = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
job = ({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
  "spec": {"parallelism": pods, "completions": pods, "backoffLimit": 100, "template": {
    "metadata": {"labels": {"kueue.x-k8s.io/pod-group-name": name},
                 "annotations": {"kueue.x-k8s.io/pod-group-total-count": str(pods), "tide.dev/complete-after": after}},
    "spec": {"schedulerName": "tide", "restartPolicy": "Never",
             "containers": [{"name": "train", "image": "train:latest",
                             "resources": {"requests": {"nvidia.com/gpu": gpus}, "limits": {"nvidia.com/gpu": gpus}}}]}}}})
tmpl = job["spec"]["template"]
tmpl["metadata"]["annotations"].update(extra)
if cls: tmpl["spec"]["priorityClassName"] = cls
print(json.dumps(job))
PY
)"
  [ "$CODE" = 201 ] || bad "create Job $1: HTTP $CODE: ${BODY:0:200}"
}

# tide_config POOLS-YAML [EXTRA-LIVE-YAML]: writes $DIR/tide/cluster.yaml
# (POLICY_EXTRA: more keys for policies.tide, starting with ", "). The tests
# count the nodes tide buys, so no spare nodes against slow boots (tide's
# default is 3).
tide_config() {
  cat > "$DIR/tide/cluster.yaml" <<YAML
pools:
$1
priority_classes:
  - {name: high, value: 100}
  - {name: normal, value: 50}
  - {name: low, value: 10, preemptible: true}
default_priority_class: normal
policies:
  tide: {scan_interval: 2s, pending_grace: 0s, idle_release_after: 15s, boot_hedge: 0${POLICY_EXTRA:-}}
live:
  state: state.db
  loop_interval: 2s
  kubernetes: {kubeconfig: $KUBECONFIG}
  provider: {kind: kwok}
  http: {port: 0}
${2:-}
YAML
}

tide_start() {
  [ -x "$TIDE" ] || { bad "no tide binary at $TIDE"; exit 1; }
  "$TIDE" run -c "$DIR/tide/cluster.yaml" "$@" > "$DIR/tide/tide.log" 2>&1 &
  TIDE_PID=$!
  wait_for 10 'grep -q "tide: started" "$DIR/tide/tide.log"' || { bad "tide did not start"; cat "$DIR/tide/tide.log"; exit 1; }
  HTTP_PORT=$(grep -o 'http on 127.0.0.1:[0-9]*' "$DIR/tide/tide.log" | head -1 | cut -d: -f2)
}

# priority_class NAME VALUE: a scheduling.k8s.io/v1 PriorityClass.
priority_class() {
  api POST /apis/scheduling.k8s.io/v1/priorityclasses "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{\"name\":\"$1\"},\"value\":$2}"
  [ "$CODE" = 201 ] || bad "create PriorityClass $1: HTTP $CODE: ${BODY:0:200}"
}
# pods_of JOB: "name phase node" of its pods, one per line.
pods_of() {
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=job-name=$1"
  jget '"\n".join(" ".join([p["metadata"]["name"], p["status"].get("phase", "?"), p["spec"].get("nodeName", "-")] + (["deleting"] if p["metadata"].get("deletionTimestamp") else [])) for p in d["items"])'
}
