#!/usr/bin/env bash
# bench/k8s_scale.sh: tide at scale on the Kubernetes test bed (issue 36). A
# benchmark, not a test: it starts its own test bed (scripts/k8s-testbed) and
# its own `tide run` (tide binds the pods; the kwok provider buys Node
# objects), submits PODS pods in gangs (Kueue plain-pod groups of 1-16 pods,
# 1-8 GPUs a pod) in WAVES waves, WAVE_INTERVAL seconds apart, sized so that
# about NODES 8-GPU nodes are needed at the peak, and measures from its own
# watch streams and tide's /metrics (bench/k8s_scale.py): pending gang to the
# create request of its nodes and to bound, tide's loop time, its API
# requests, lists against loops, and peak memory. Stops everything it
# started, by PID.
#
#   bench/k8s_scale.sh                         # 1,000 nodes, 10,000 pods
#   NODES=50 PODS=500 WAVE_INTERVAL=15 bench/k8s_scale.sh   # a quick run
#
# Settings (environment): NODES (1000), PODS (10000), WAVES (10),
# WAVE_INTERVAL (30 s), KIND (pods: the harness posts the pods; jobs: one
# batch/v1 Job a gang, whose pods the Job controller makes), THREADS (8),
# COMPLETE_AFTER (how long a pod runs; default sized for the peak),
# LOOP (tide's loop interval, 2s), BOOT (the pools' boot delay, 5s),
# OUT (the JSON file; default build/k8s_scale-NODES-PODS.json), TIDE
# (build/test/tide), MAX_WAIT (900 s after the last wave for every pod to end
# and every node to go), KEEP=1 keeps the working folder.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TB=$ROOT/scripts/k8s-testbed
TIDE=${TIDE:-$ROOT/build/test/tide}
NODES=${NODES:-1000} PODS=${PODS:-10000} WAVES=${WAVES:-10} WAVE_INTERVAL=${WAVE_INTERVAL:-30}
KIND=${KIND:-pods} THREADS=${THREADS:-8} LOOP=${LOOP:-2s} BOOT=${BOOT:-5s}
OUT=${OUT:-$ROOT/build/k8s_scale-$NODES-$PODS.json}
T0=$(date +%s.%N)
note() { echo "[$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s] $*"; }

[ -x "$TIDE" ] || { echo "no tide binary at $TIDE" >&2; exit 1; }
# A build of the test bed may be running already (it is idempotent once
# done): wait for it rather than build beside it.
for _ in $(seq 1 360); do
  pgrep -f "k8s-testbed build" > /dev/null || break
  [ "${waited:-}" ] || { note "waiting for a running scripts/k8s-testbed build"; waited=1; }
  sleep 5
done
"$TB" build

DIR=$(mktemp -d "${TMPDIR:-/tmp}/tide-k8s-scale.XXXXXX")
mkdir -p "$DIR/tide"
TIDE_PID=
finish() {
  local rc=$?
  if [ -n "$TIDE_PID" ] && kill -0 "$TIDE_PID" 2>/dev/null; then
    kill -TERM "$TIDE_PID" 2>/dev/null || true
    for _ in $(seq 1 150); do kill -0 "$TIDE_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$TIDE_PID" 2>/dev/null; then note "tide (PID $TIDE_PID) did not stop on SIGTERM: KILL"; kill -KILL "$TIDE_PID" 2>/dev/null || true; fi
  fi
  if [ -f "$DIR/pids" ] && ! "$TB" stop "$DIR" > /dev/null; then note "test bed processes left running"; rc=1; fi
  if [ "$rc" -ne 0 ]; then
    echo "--- tail of tide's log"; tail -n 20 "$DIR/tide/tide.log" 2>/dev/null || true
  fi
  if [ -z "${KEEP:-}" ]; then rm -rf "$DIR"; else echo "kept $DIR"; fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

note "starting the test bed in $DIR"
"$TB" start "$DIR" > "$DIR/testbed.log" 2>&1 || { cat "$DIR/testbed.log"; exit 1; }
# shellcheck disable=SC1091
. "$DIR/env"
TOKEN=$(cat "$K8S_TOKEN_FILE")
for _ in $(seq 1 100); do  # pods are refused until the default ServiceAccount exists
  curl -fsS -o /dev/null --cacert "$K8S_CA_FILE" -H "Authorization: Bearer $TOKEN" \
    "$K8S_API/api/v1/namespaces/default/serviceaccounts/default" && break
  sleep 0.2
done

# Two pools of 8-GPU nodes, 60% of NODES each: room for the peak, never the
# limit. The policies as the integration tests set them (lib.sh's
# tide_config): no spares against slow boots, nodes back after 15 s idle.
MAX=$(( (NODES * 6 + 9) / 10 ))
cat > "$DIR/tide/cluster.yaml" <<YAML
pools:
  - {name: a100x8, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: $MAX, boot_delay: $BOOT}
  - {name: h100x8, instance_type: {gpus: 8}, price_per_hour: 40, max_nodes: $MAX, boot_delay: $BOOT}
priority_classes:
  - {name: normal, value: 50}
default_priority_class: normal
policies:
  tide: {scan_interval: 2s, pending_grace: 0s, idle_release_after: 15s, boot_hedge: 0}
live:
  state: state.db
  loop_interval: $LOOP
  kubernetes: {kubeconfig: $KUBECONFIG}
  provider: {kind: kwok}
  http: {port: 0}
YAML
"$TIDE" run -c "$DIR/tide/cluster.yaml" > "$DIR/tide/tide.log" 2>&1 &
TIDE_PID=$!
for _ in $(seq 1 100); do grep -q "tide: started" "$DIR/tide/tide.log" && break; sleep 0.1; done
grep -q "tide: started" "$DIR/tide/tide.log" || { echo "tide did not start"; cat "$DIR/tide/tide.log"; exit 1; }
HTTP_PORT=$(grep -o 'http on 127.0.0.1:[0-9]*' "$DIR/tide/tide.log" | head -1 | cut -d: -f2)
note "tide $("$TIDE" --version 2>/dev/null | head -1) ($TIDE, built $(date -r "$TIDE" +%FT%T)) runs as PID $TIDE_PID, http on $HTTP_PORT; $NODES nodes, $PODS pods, $WAVES waves every ${WAVE_INTERVAL}s"

mkdir -p "$(dirname "$OUT")"
loop_s=$(echo "$LOOP" | sed 's/s$//')
python3 "$ROOT/bench/k8s_scale.py" --dir "$DIR" --tide-pid "$TIDE_PID" --tide-port "$HTTP_PORT" \
  --loop-interval "$loop_s" --out "$OUT" --nodes "$NODES" --pods "$PODS" --waves "$WAVES" \
  --wave-interval "$WAVE_INTERVAL" --kind "$KIND" --threads "$THREADS" --max-wait "${MAX_WAIT:-900}" ${COMPLETE_AFTER:+--complete-after "$COMPLETE_AFTER"}
errors=$(grep -c "error" "$DIR/tide/tide.log" || true)
note "tide logged $errors lines with 'error'$([ "$errors" -gt 0 ] && echo ": $(grep -m2 error "$DIR/tide/tide.log" | tr '\n' ' ')")"
cp "$DIR/tide/tide.log" "${OUT%.json}.tide.log"
note "tide's log copied to ${OUT%.json}.tide.log"
