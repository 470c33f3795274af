#!/usr/bin/env bash
# Smoke test of the Kubernetes test bed (scripts/k8s-testbed): builds it (a
# no-op when the binaries are there), starts one in a temporary folder, and
# drives the API server with curl the way tide's Kubernetes backend and kwok
# provider will: a kwok Node with GPUs turns Ready; a pod with schedulerName
# tide is bound by POST .../binding, runs, and completes after the delay in
# its tide.dev/complete-after annotation; a Job's pod under a PodDisruptionBudget
# is refused eviction (429), a Job's pod without one is evicted and recreated;
# PodScheduled=False/Unschedulable is written through pods/status; a watch
# sees events and bookmarks; a node is cordoned. Then it stops the test bed by
# PID and fails if anything of it is still running.
#
#   tests/integration/k8s/testbed_smoke.sh        (KEEP=1 keeps the folder and logs)
# ok, bad, note, wait_for, api, jget and the skip rules are lib.sh's.
. "$(dirname "$0")/lib.sh"
k8s_require
DIR=$(mktemp -d "${TMPDIR:-/tmp}/tide-k8s-smoke.XXXXXX")
finish() {
  local rc=$?
  if [ -f "$DIR/pids" ]; then
    if "$TB" stop "$DIR"; then ok "stop: every process stopped by PID"; else bad "stop: processes left running"; fi
    local n p
    while read -r n p; do
      # Still our process (not a zombie that init has yet to reap, not a reused PID)?
      if [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null || echo gone)" != gone ] \
         && [ "$(awk '{print $3}' "/proc/$p/stat")" != Z ] && tr '\0' ' ' < "/proc/$p/cmdline" | grep -q "/bin/$n "; then
        bad "$n (PID $p) still running after stop"; kill -KILL "$p" 2>/dev/null || true
      fi
    done < "$DIR/pids"
  fi
  if [ "$FAIL" -gt 0 ] || [ "$rc" -ne 0 ]; then
    for f in "$DIR"/logs/*.log; do [ -f "$f" ] && { echo "--- tail of $f"; tail -n 15 "$f"; }; done
  fi
  if [ -z "${KEEP:-}" ]; then rm -rf "$DIR"; else echo "kept $DIR"; fi
  echo "$PASS passed, $FAIL failed"
  if [ "$FAIL" -gt 0 ] && [ "$rc" -eq 0 ]; then rc=1; fi
  exit "$rc"
}
trap finish EXIT

t=$(date +%s.%N)
"$TB" start "$DIR"
ok "test bed started in $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s"
# shellcheck disable=SC1091
. "$DIR/env"
TOKEN=$(cat "$K8S_TOKEN_FILE")
NS=default

phase() { api GET "/api/v1/namespaces/$NS/pods/$1"; jget 'd["status"].get("phase","")'; }
cond() { # cond POD TYPE FIELD
  api GET "/api/v1/namespaces/$NS/pods/$1"
  jget "[c['$3'] for c in d['status'].get('conditions', []) if c['type'] == '$2'][0]"
}
bind() { api POST "/api/v1/namespaces/$NS/pods/$1/binding" \
  "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$1\"},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"$2\"}}"; }
pod_json() { # pod_json NAME COMPLETE-AFTER
  cat <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$1","annotations":{"$K8S_COMPLETE_AFTER_ANNOTATION":"$2"}},
 "spec":{"schedulerName":"tide","restartPolicy":"Never",
  "containers":[{"name":"main","image":"tide.dev/fake","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}
EOF
}
job_json() { # job_json NAME
  cat <<EOF
{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"$1"},
 "spec":{"parallelism":1,"completions":1,"backoffLimit":6,
  "template":{"metadata":{"labels":{"app":"$1"},"annotations":{"$K8S_COMPLETE_AFTER_ANNOTATION":"1h"}},
   "spec":{"schedulerName":"tide","restartPolicy":"Never",
    "containers":[{"name":"main","image":"tide.dev/fake","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}}
EOF
}
job_pods() { # names of the live pods of job $1, one per line
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=batch.kubernetes.io/job-name%3D$1"
  jget '"\n".join(p["metadata"]["name"] for p in d["items"] if not p["metadata"].get("deletionTimestamp"))'
}
evict() { api POST "/api/v1/namespaces/$NS/pods/$1/eviction" \
  "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"$NS\"}}"; }

# --- authentication: the bearer token and the admin client certificate
api GET /version
[ "$CODE" = 200 ] && [ "$(jget 'd["gitVersion"]')" = "$K8S_VERSION" ] \
  && ok "bearer token: /version says $K8S_VERSION" || bad "GET /version: $CODE $BODY"
code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$K8S_CA_FILE" --cert "$K8S_CLIENT_CERT" --key "$K8S_CLIENT_KEY" "$K8S_API/api/v1/nodes")
[ "$code" = 200 ] && ok "client certificate: GET /api/v1/nodes 200" || bad "client certificate: GET nodes answered $code"

# The service-account admission plugin refuses pods until the namespace's
# default ServiceAccount exists (the serviceaccount controller makes it).
wait_for 30 'api GET /api/v1/namespaces/$NS/serviceaccounts/default; [ "$CODE" = 200 ]' \
  && ok "serviceaccount controller made default/default" || bad "no default ServiceAccount"

# --- a kwok node with GPUs turns Ready
NODE=gpu-node-1
api POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",
 \"metadata\":{\"name\":\"$NODE\",\"annotations\":{\"kwok.x-k8s.io/node\":\"fake\"},\"labels\":{\"type\":\"kwok\",\"karpenter.sh/capacity-type\":\"on-demand\"}},
 \"spec\":{\"providerID\":\"kwok://$NODE\"},
 \"status\":{\"capacity\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"},
             \"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"pods\":\"110\",\"nvidia.com/gpu\":\"8\"}}}"
[ "$CODE" = 201 ] && ok "POST node $NODE" || bad "POST node: $CODE $BODY"
t=$(date +%s.%N)
node_ready() { api GET /api/v1/nodes/$NODE; [ "$(jget '[c["status"] for c in d["status"]["conditions"] if c["type"] == "Ready"][0]')" = True ]; }
if wait_for 30 node_ready; then
  ok "node Ready after $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s; allocatable nvidia.com/gpu=$(jget 'd["status"]["allocatable"]["nvidia.com/gpu"]')"
else bad "node not Ready: $BODY"; fi
[ "$(jget 'd["status"]["allocatable"]["nvidia.com/gpu"]')" = 8 ] || bad "kwok lost the node's GPU allocatable: $BODY"
wait_for 20 'api GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/$NODE; [ "$CODE" = 200 ]' \
  && ok "kwok holds the node's Lease (holder $(jget 'd["spec"]["holderIdentity"]'))" || bad "no node Lease"

# --- a pod of schedulerName tide: bound by us, run and completed by kwok
api POST /api/v1/namespaces/$NS/pods "$(pod_json p1 3s)"
[ "$CODE" = 201 ] && ok "POST pod p1 (schedulerName tide, complete-after 3s)" || bad "POST pod p1: $CODE $BODY"
sleep 1
[ "$(phase p1)" = Pending ] && ok "p1 stays Pending without a binding" || bad "p1 is $(phase p1) before binding"
bind p1 $NODE
[ "$CODE" = 201 ] && ok "POST pods/p1/binding -> 201" || bad "binding p1: $CODE $BODY"
[ "$(cond p1 PodScheduled status)" = True ] && ok "binding set PodScheduled=True" || bad "PodScheduled after binding: $BODY"
wait_for 20 '[ "$(phase p1)" = Running ]' && t_run=$(date +%s.%N) && ok "kwok made p1 Running" || bad "p1 not Running: $(phase p1)"
if wait_for 30 '[ "$(phase p1)" = Succeeded ]'; then
  took=$(awk -v a="${t_run:-0}" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  if awk -v x="$took" 'BEGIN { exit !(x >= 2.5 && x <= 8) }'; then ok "p1 Succeeded ${took}s after Running (annotation: 3s)"
  else bad "p1 Succeeded ${took}s after Running, not about 3s"; fi
else bad "p1 never Succeeded: $(phase p1)"; fi

# --- a Job's pod under a PDB with minAvailable = replicas: eviction is refused
api POST /apis/batch/v1/namespaces/$NS/jobs "$(job_json j1)"
[ "$CODE" = 201 ] || bad "POST job j1: $CODE $BODY"
api POST /apis/policy/v1/namespaces/$NS/poddisruptionbudgets \
  '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"j1"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"j1"}}}}'
[ "$CODE" = 201 ] || bad "POST pdb j1: $CODE $BODY"
wait_for 20 '[ -n "$(job_pods j1)" ]' && J1=$(job_pods j1) && ok "job controller made pod $J1" || bad "job j1 made no pod"
bind "${J1:-none}" $NODE; [ "$CODE" = 201 ] || bad "binding $J1: $CODE $BODY"
wait_for 20 '[ "$(phase "$J1")" = Running ]' || bad "$J1 not Running"
pdb_ready() { api GET /apis/policy/v1/namespaces/$NS/poddisruptionbudgets/j1; [ "$(jget 'd["status"]["currentHealthy"]')" = 1 ]; }
wait_for 30 pdb_ready && ok "disruption controller: PDB j1 currentHealthy=1 disruptionsAllowed=$(jget 'd["status"]["disruptionsAllowed"]')" \
  || bad "PDB status never computed: $BODY"
evict "$J1"
[ "$CODE" = 429 ] && ok "eviction of $J1 under the PDB -> 429 ($(jget 'd["message"]'))" || bad "eviction of $J1: $CODE $BODY"

# --- a Job's pod without a PDB: evicted, and the Job controller replaces it
api POST /apis/batch/v1/namespaces/$NS/jobs "$(job_json j2)"
wait_for 20 '[ -n "$(job_pods j2)" ]' && J2=$(job_pods j2) || bad "job j2 made no pod"
bind "${J2:-none}" $NODE
wait_for 20 '[ "$(phase "$J2")" = Running ]' || bad "$J2 not Running"
evict "$J2"
case "$CODE" in 200|201) ok "eviction of $J2 (no PDB) -> $CODE" ;; *) bad "eviction of $J2: $CODE $BODY" ;; esac
gone() { api GET "/api/v1/namespaces/$NS/pods/$J2"; [ "$CODE" = 404 ]; }
wait_for 30 gone && ok "kwok deleted the evicted pod $J2" || bad "$J2 not deleted: $BODY"
replaced() { local p; p=$(job_pods j2); [ -n "$p" ] && [ "$p" != "$J2" ]; }
wait_for 30 replaced && ok "job controller recreated j2's pod: $(job_pods j2)" || bad "j2's pod not recreated"

# --- a scheduler's verdict: PodScheduled=False, reason Unschedulable
api POST /api/v1/namespaces/$NS/pods "$(pod_json p2 1h)"
MSG="tide: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu"
api PATCH /api/v1/namespaces/$NS/pods/p2/status \
  "{\"status\":{\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"False\",\"reason\":\"Unschedulable\",\"message\":\"$MSG\"}]}}" \
  application/strategic-merge-patch+json
[ "$CODE" = 200 ] || bad "PATCH p2/status: $CODE $BODY"
if [ "$(cond p2 PodScheduled reason)" = Unschedulable ] && [ "$(cond p2 PodScheduled message)" = "$MSG" ] \
   && [ "$(cond p2 PodScheduled status)" = False ]; then ok "PATCH pods/p2/status: PodScheduled=False Unschedulable read back"
else bad "p2's PodScheduled condition: $BODY"; fi

# --- watch: events from a resourceVersion, and bookmarks
api GET "/api/v1/namespaces/$NS/pods"
RV=$(jget 'd["metadata"]["resourceVersion"]')
curl -sS -N --max-time 15 --cacert "$K8S_CA_FILE" -H "Authorization: Bearer $TOKEN" \
  "$K8S_API/api/v1/namespaces/$NS/pods?watch=1&allowWatchBookmarks=true&resourceVersion=$RV&timeoutSeconds=12" > "$DIR/watch" 2>&1 &
WATCH=$!
sleep 1
api POST /api/v1/namespaces/$NS/pods "$(pod_json p3 1s)"
bind p3 $NODE
wait "$WATCH" || true
summary=$(python3 -c 'import json, sys, collections
c = collections.Counter()
for line in open(sys.argv[1]):
    e = json.loads(line); c[e["type"]] += 1
print(" ".join(f"{k}={v}" for k, v in sorted(c.items())))' "$DIR/watch" 2>&1) || true
grep -q '"type":"ADDED".*"name":"p3"' "$DIR/watch" && grep -q '"type":"MODIFIED"' "$DIR/watch" \
  && ok "watch from resourceVersion $RV: $summary" || bad "watch saw: $summary $(head -c 300 "$DIR/watch")"
grep -q '"type":"BOOKMARK"' "$DIR/watch" && ok "watch: BOOKMARK within 12s" || note "no BOOKMARK within a 12 s watch (bookmarks are periodic)"
# A watch-list stream ends its initial events with a BOOKMARK annotated
# k8s.io/initial-events-end, at once.
curl -sS -N --max-time 6 --cacert "$K8S_CA_FILE" -H "Authorization: Bearer $TOKEN" \
  "$K8S_API/api/v1/namespaces/$NS/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=3" > "$DIR/watchlist" 2>&1 || true
grep -q '"type":"BOOKMARK".*initial-events-end' "$DIR/watchlist" \
  && ok "watch-list (sendInitialEvents=true): BOOKMARK with k8s.io/initial-events-end" || bad "watch-list: $(head -c 300 "$DIR/watchlist")"

# --- cordon
api PATCH /api/v1/nodes/$NODE '{"spec":{"unschedulable":true}}' application/merge-patch+json
[ "$CODE" = 200 ] && [ "$(jget 'd["spec"]["unschedulable"]')" = True ] && ok "cordon: spec.unschedulable=true" || bad "cordon: $CODE $BODY"
