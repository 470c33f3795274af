#!/usr/bin/env bash
# Crash soak on Kubernetes (issue 35, item 3): the Slurm soak's trials
# (tests/integration/soak.sh) against the Kubernetes test bed and the kwok
# provider. tide is killed with SIGKILL at random moments (after a delay,
# just after one of its actions, or by its own kill-after-create fault)
# through scale-ups, releases, spot notices and preemptions, and restarted;
# the same invariants are checked after each kill, after each restart and
# at the end:
#   bought_twice  no Node name held by two instances at once, at the
#                 provider (the cluster's Nodes, as a watch saw them) or in
#                 the store; no idempotency key that made two Nodes
#   leaked        after a restart the store's live instances are the
#                 cluster's tide Nodes and nothing from before the kill is
#                 still pending; at the end no tide Node and no live instance
#   jobs          every Job submitted exists and has not failed; at the end
#                 every one is Complete
#   ledger        the store's cost ledger equals the Nodes' lifetimes (from
#                 tide.dev/created to their deletion), within 2 s, and totals
#   protected     no pod of a protected gang (tide.dev/protected) was evicted
#                 and made again, and tide's log and store have no stop of it
#
#   SOAK_TRIALS=10 SOAK_SEED=35003 TIDE=build/h-soak/tide bash tests/integration/k8s/soak.sh
#
# The watches' records and tide's log are under the test bed's folder (KEEP=1
# keeps it). Exit 77 when the test bed cannot run here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../soak_lib.sh"
command -v sqlite3 > /dev/null || { echo "SKIP: sqlite3 is not installed (scripts/deps installs it)"; exit 77; }
WATCH=$(dirname "$0")/soak_watch.py
k8s_init soak
k8s_start
priority_class high 100
priority_class low 10
# Spot first while it has room; preemption after 5 s; no disruption budget.
POLICY_EXTRA=", expanders: [priority, least-cost], preemption: {enabled: true, after: 5s}, budget: {max_nodes: 0}" tide_config \
  "  - {name: a100-spot, instance_type: {gpus: 8}, tier: spot, price_per_hour: 10, max_nodes: 2, boot_delay: 2s, priority: 10}
  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 2, boot_delay: 2s, priority: 1}" \
  "  jobs: {checkpoint_grace: 5s}"
sed -i 's/idle_release_after: 15s/idle_release_after: 10s/' "$DIR/tide/cluster.yaml"
PRICES='a100-spot*=10,a100-od*=30'
S=$DIR/soak
mkdir -p "$S"
: > "$S/jobs"   # NAME KIND TRIAL PODS
helper_start watch-nodes env K8S_API="$K8S_API" K8S_TOKEN_FILE="$K8S_TOKEN_FILE" K8S_CA_FILE="$K8S_CA_FILE" python3 "$WATCH" watch "/api/v1/nodes?labelSelector=tide.dev/provider%3Dkwok" "$S/nodes.log"
helper_start watch-pods env K8S_API="$K8S_API" K8S_TOKEN_FILE="$K8S_TOKEN_FILE" K8S_CA_FILE="$K8S_CA_FILE" python3 "$WATCH" watch "/api/v1/namespaces/$NS/pods" "$S/pods.log"
DB=$DIR/tide/state.db
LOG=$DIR/tide/tide.log
: > "$LOG"

# ---- the workload: Jobs whose pods kwok completes after their time ----
submit() {  # KIND PODS GPUS SECONDS CLASS [ANNOTATIONS-JSON]
  local name="${1:0:1}$TRIAL-$((++NJOBS))"
  if [ -n "${6:-}" ]; then gang_job "$name" "$2" "$3" "${4}s" "$5" "$6"; else gang_job "$name" "$2" "$3" "${4}s" "$5"; fi
  if [ "$CODE" = 201 ]; then
    echo "$name $1 $TRIAL $2" >> "$S/jobs"
    SUBMITTED="$SUBMITTED $name"
  fi
}
NJOBS=0
soak_job() {  # KIND GPUS SECONDS
  case $1 in
    short|long) submit "$1" 1 "$2" "$3" low ;;
    protected) submit protected 1 "$2" "$3" low '{"tide.dev/protected": "true"}' ;;
  esac
}
soak_high() { submit high 1 8 "$high_s" high; }
soak_interrupt() {  # PICK NOTICE: a spot notice on the PICK-th spot Node there is
  api GET "/api/v1/nodes?labelSelector=tide.dev/pool%3Da100-spot"
  local nodes n at
  read -r -a nodes <<<"$(jget '" ".join(sorted(n["metadata"]["name"] for n in d["items"] if not n["metadata"].get("deletionTimestamp") and "tide.dev/interruption-at" not in n["metadata"].get("annotations", {})))')"
  if [ ${#nodes[@]} = 0 ]; then INJECTED="$INJECTED none"; return; fi
  n=${nodes[$(( $1 % ${#nodes[@]} ))]}
  at=$(date -u -d "+$2 seconds" +%Y-%m-%dT%H:%M:%SZ)
  api PATCH "/api/v1/nodes/$n" \
    "{\"metadata\":{\"annotations\":{\"tide.dev/interruption-at\":\"$at\"}},\"spec\":{\"taints\":[{\"key\":\"tide.dev/interruption\",\"effect\":\"NoSchedule\"}]}}" \
    application/merge-patch+json
  if [ "$CODE" = 200 ]; then INJECTED="$INJECTED $n/${2}s"; INTERRUPTS=$((INTERRUPTS + 1)); else INJECTED="$INJECTED $n:HTTP$CODE"; fi
}

# ---- checks ----
provider_store() {  # MODE [SINCE]
  python3 "$WATCH" intervals "$S/nodes.log" > "$S/intervals" 2>&1 || echo "VIOLATION ledger watch-log soak_watch.py: $(tail -1 "$S/intervals")"
  perl "$SOAK_CHECK" --db "$DB" --intervals "$S/intervals" --prices "$PRICES" --mode "$1" --since "${2:-0}" 2>&1 |
    sed 's/^soak_check:/VIOLATION ledger checker soak_check:/' || true
  python3 "$WATCH" keys "$S/nodes.log" || true
}
jobs_check() {  # MODE
  api GET "/apis/batch/v1/namespaces/$NS/jobs"
  printf '%s' "$BODY" | python3 -c '
import json, sys
mode, jobs = sys.argv[1], sys.argv[2]
d = json.load(sys.stdin)
have = {j["metadata"]["name"]: j for j in d.get("items", [])}
for line in open(jobs):
    name, kind, trial, pods = line.split()
    j = have.get(name)
    if j is None:
        print(f"VIOLATION jobs unknown:{name} Job {name} ({kind}, trial {trial}) is gone"); continue
    st = j.get("status", {})
    conds = {c["type"]: c for c in st.get("conditions", []) if c.get("status") == "True"}
    if "Failed" in conds:
        print("VIOLATION jobs failed:%s Job %s (%s, trial %s) failed: %s" % (name, name, kind, trial, conds["Failed"].get("reason")))
    elif mode == "final" and "Complete" not in conds:
        print("VIOLATION jobs end:%s Job %s (%s, trial %s) is not complete at the end: %s active, %s succeeded, %s failed"
              % (name, name, kind, trial, st.get("active", 0), st.get("succeeded", 0), st.get("failed", 0)))
' "$1" "$S/jobs" || echo "VIOLATION jobs list:$TRIAL the Jobs could not be listed (HTTP $CODE)"
}
protected_check() {
  local name kind trial pods ev
  while read -r name kind trial pods; do
    [ "$kind" = protected ] || continue
    python3 "$WATCH" pods "$S/pods.log" "$name" "$pods" || true
    grep -qE "(sent [A-Z0-9]+ to|requeued|cancelled|evicted) job $NS/$name( |$)" "$LOG" &&
      echo "VIOLATION protected log:$name tide acted on protected job $NS/$name: $(grep -m1 -E "(sent [A-Z0-9]+ to|requeued|cancelled|evicted) job $NS/$name( |$)" "$LOG" | cut -c1-200)"
    ev=$(sqlite3 "$DB" "select kind || ' at ' || at from job_events where job = '$NS/$name' and kind != 'interrupted'" 2>/dev/null | tr '\n' ' ' || true)
    [ -z "$ev" ] || echo "VIOLATION protected store:$name tide's store has stops of protected job $NS/$name: $ev"
  done < "$S/jobs"
}
check() {  # WHEN MODE [SINCE]: retried for a few seconds while it finds something (but at a kill)
  local when=$1 mode=$2 since=${3:-0} out=$S/check.out tries=1 i
  if [ "$mode" != kill ]; then tries=6; fi
  sleep 0.5  # the watches' last events
  for i in $(seq 1 $tries); do
    { provider_store "$mode" "$since"; jobs_check "$mode"; protected_check; } > "$out" 2>&1 || true
    if ! grep -q '^VIOLATION ' "$out" || [ "$i" = "$tries" ]; then break; fi
    sleep 1
  done
  record "$out" "$when"
  LAST_TOTALS=$(grep '^TOTALS ' "$out" | cut -d' ' -f2- || true)
}

# ---- tide: started, killed, started again ----
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
first_loop() {
  local m
  m=$(curl -sf "http://127.0.0.1:$HTTP_PORT/metrics") || return 1
  awk '$1 == "tide_loops_total" && $2 >= 1 {f = 1} END {exit !f}' <<<"$m"
}
soak_start() {  # [FAULT]: returns once its first loop is done, or it died
  local from
  from=$(grep -c "tide: started" "$LOG" || true)
  if [ -n "${1:-}" ]; then
    TIDE_FAULT=$1 "$TIDE" run -c "$DIR/tide/cluster.yaml" >> "$LOG" 2>&1 &
  else
    "$TIDE" run -c "$DIR/tide/cluster.yaml" >> "$LOG" 2>&1 &
  fi
  TIDE_PID=$!
  wait_for 20 "[ \$(grep -c 'tide: started' '$LOG') -gt $from ] || ! alive $TIDE_PID" ||
    { bad "tide did not start"; tail -20 "$LOG"; exit 1; }
  HTTP_PORT=$(grep -o 'http on 127.0.0.1:[0-9]*' "$LOG" | tail -1 | cut -d: -f2)
  wait_for 30 "first_loop || ! alive $TIDE_PID" || { bad "tide finished no loop within 30 s"; tail -20 "$LOG"; exit 1; }
}
acted_since() {  # BYTE: an action of tide's in its log since then
  local -
  set +o pipefail
  tail -c +"$(($1 + 1))" "$LOG" | grep -qE '(bought|released|releasing|draining) node|sent [A-Z0-9]+ to job|(requeued|evicted|bound) job|gone at the provider'
}

note "crash soak on Kubernetes: SOAK_SEED=$SOAK_SEED SOAK_TRIALS=$SOAK_TRIALS (replay: SOAK_SEED=$SOAK_SEED SOAK_TRIALS=$SOAK_TRIALS TIDE=... bash $0)"
KILLS=0 FAULT_KILLS=0 INTERRUPTS=0
T_START=$(date +%s)
soak_start
for TRIAL in $(seq 1 "$SOAK_TRIALS"); do
  soak_draw
  if [ "$kill_mode" = 5 ]; then
    kill -TERM "$TIDE_PID" 2>/dev/null || true
    wait_for 30 "! alive $TIDE_PID" || kill -KILL "$TIDE_PID" 2>/dev/null || true
    { wait "$TIDE_PID"; } 2>/dev/null || true
    soak_start kill-after-create
  fi
  api GET "/api/v1/namespaces/$NS/pods?fieldSelector=status.phase%3DPending"
  backlog=$(jget 'len(d["items"])')
  soak_trial "$LOG" "$backlog"
done

note "all trials done; waiting for the work to drain"
complete() {
  api GET "/apis/batch/v1/namespaces/$NS/jobs"
  jget 'sum(1 for j in d["items"] if not any(c["type"] == "Complete" and c["status"] == "True" for c in j.get("status", {}).get("conditions", [])))'
}
wait_for 240 '[ "$(complete)" = 0 ]' && ok "every Job complete" || note "Jobs not complete: $(complete)"
tide_nodes() { api GET "/api/v1/nodes?labelSelector=tide.dev/provider%3Dkwok"; jget 'len(d["items"])'; }
wait_for 60 '[ "$(tide_nodes)" = 0 ]' && ok "every Node given back" || note "tide Nodes left: $(tide_nodes)"
kill -TERM "$TIDE_PID" 2>/dev/null || true
wait_for 30 "! alive $TIDE_PID" || kill -KILL "$TIDE_PID" 2>/dev/null || true
check "at the end" final
T_END=$(date +%s)
q() { sqlite3 "$DB" "$1" 2>/dev/null || echo "?"; }
note "coverage: Jobs submitted $(wc -l < "$S/jobs") ($(cut -d' ' -f2 "$S/jobs" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}' | sed 's/, $//'));" \
  "nodes bought $(q "select count(*) from instances"), released $(q "select count(*) from instances where state = 'deleted'")," \
  "lost at the provider $(q "select count(*) from instances where state = 'lost'"); spot notices injected $INTERRUPTS;" \
  "evictions $(grep -c 'evicted job' "$LOG" || true) (preempt $(grep -c 'evicted job.*(preempt;' "$LOG" || true)," \
  "evacuate $(grep -c 'evicted job.*(evacuate;' "$LOG" || true)); pods made again after an eviction: $(python3 -c '
import sys
seen = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 7 and p[1] == "ADDED" and p[6] != "-": seen.setdefault(p[6], set()).add(p[2])
print(sum(len(v) - 1 for v in seen.values()))' "$S/pods.log");" \
  "recovery: $(grep -c 'recovered: the create .* reached' "$LOG" || true) creates adopted," \
  "$(grep -c 'recovered: the create .* never reached' "$LOG" || true) abandoned, $(grep -c 'recovered: finished the delete' "$LOG" || true) deletes finished," \
  "$(grep -c 'adopted instance' "$LOG" || true) instances adopted"
note "ledger: $LAST_TOTALS"
soak_report "$KILLS" "$FAULT_KILLS" "$(( T_END - T_START ))" "jobs=$(wc -l < "$S/jobs") interruptions=$INTERRUPTS"
