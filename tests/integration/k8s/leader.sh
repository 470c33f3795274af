#!/usr/bin/env bash
# Two replicas of tide run, one actor: leader election through a
# coordination.k8s.io/v1 Lease (live.kubernetes.leader_election). Replica a
# leads; b watches, serves read-only /status and refuses commands. During a
# scale-up (two gangs, nodes booting for 20 s) a is killed with SIGKILL and
# a third gang arrives: b takes the Lease within its length (15 s) plus one
# retry (2 s), finds what a bought through the provider's list (the Node
# objects) and the shared state file, buys only for the third gang, and
# nothing twice: 6 nodes for 6 pods in the end.
. "$(dirname "$0")/lib.sh"
k8s_init leader
k8s_start
api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"tide-system"}}'
[ "$CODE" = 201 ] || bad "create namespace tide-system: HTTP $CODE"
tide_config "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 10, boot_delay: 20s}"
python3 - "$DIR/tide/cluster.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read().replace("  kubernetes: {kubeconfig: ", "  kubernetes: {leader_election: {lease: tide, namespace: tide-system}, kubeconfig: ")
s = s.replace("  http: {port: 0}", "  http: {port: 0, token_file: token}")
open(p, "w").write(s)
PY

# replica NAME: starts `tide run` as POD_NAME=NAME, logging to tide-NAME.log.
replica() {
  POD_NAME=$1 "$TIDE" run -c "$DIR/tide/cluster.yaml" > "$DIR/tide/tide-$1.log" 2>&1 &
  eval "PID_$1=$!"
  echo "tide-$1 $!" >> "$DIR/helper-pids"
  wait_for 10 "grep -q 'tide: started' '$DIR/tide/tide-$1.log'" || { bad "replica $1 did not start"; cat "$DIR/tide/tide-$1.log"; exit 1; }
  eval "PORT_$1=$(grep -o 'http on 127.0.0.1:[0-9]*' "$DIR/tide/tide-$1.log" | head -1 | cut -d: -f2)"
}
holder() { api GET /apis/coordination.k8s.io/v1/namespaces/tide-system/leases/tide; jget 'd["spec"].get("holderIdentity", "")'; }
role() { curl -s "http://127.0.0.1:$1/status" | python3 -c 'import json, sys; print(json.load(sys.stdin)["leadership"]["role"])' 2>/dev/null; }

replica a
wait_for 20 '[ "$(holder)" = a ]' && ok "replica a holds the Lease" || bad "Lease holder: '$(holder)'"
wait_for 10 "grep -q 'leading: this replica (a)' '$DIR/tide/tide-a.log'" && ok "a logs that it leads" || bad "a never logged that it leads"
replica b
wait_for 10 '[ "$(role "$PORT_b")" = follower ]' && ok "b's /status: follower" || bad "b's role: '$(role "$PORT_b")'"
# Commands go to the leader: b, with the right token, refuses them.
AUTH="Authorization: Bearer $(cat "$DIR/tide/token")"
reply=$(curl -s -w ' HTTP %{http_code}' -X POST -H "$AUTH" "http://127.0.0.1:$PORT_b/api/v1/loop")
case "$reply" in
  *"does not lead"*"HTTP 409") ok "b refuses a command: $reply" ;;
  *) bad "b's answer to POST /api/v1/loop: $reply" ;;
esac
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "$AUTH" "http://127.0.0.1:$PORT_a/api/v1/loop")
[ "$code" = 200 ] && ok "a, the leader, accepts it" || bad "a answered POST /api/v1/loop with HTTP $code"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT_b/healthz")
[ "$code" = 200 ] && ok "b is healthy while it follows (/healthz 200)" || bad "b's /healthz: HTTP $code"
[ "$(holder)" = a ] && ok "the Lease is still a's with b running" || bad "Lease holder: '$(holder)'"

nodes() { api GET "/api/v1/nodes?labelSelector=tide.dev/pool"; jget 'len(d["items"])'; }
for g in g1 g2; do gang_job "$g" 2 8 10m; done
wait_for 30 '[ "$(nodes)" -ge 1 ]' && ok "a started the scale-up: $(nodes) node(s) created" || bad "a created no node"
kill -KILL "$PID_a"
t_kill=$(date +%s.%N)
wait "$PID_a" 2> /dev/null || true
# a's last renewal, as the Lease records it (a is gone: nothing renews it now).
api GET /apis/coordination.k8s.io/v1/namespaces/tide-system/leases/tide
renew_a=$(jget 'd["spec"]["renewTime"]')
before=$(nodes)
note "a killed with SIGKILL while its $before node(s) boot; a third gang arrives"
gang_job g3 2 8 10m
if wait_for 40 '[ "$(holder)" = b ]'; then
  took=$(awk -v a="$t_kill" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  note "b holds the Lease about $took s after the kill"
  # From the Lease's own record, not a stopwatch: b's acquireTime against
  # a's last renewTime. Never before the Lease's length (15 s) has passed,
  # and within it plus one retry (2 s), to the second.
  api GET /apis/coordination.k8s.io/v1/namespaces/tide-system/leases/tide
  acquire_b=$(jget 'd["spec"]["acquireTime"]')
  gap=$(python3 -c 'import sys
from datetime import datetime
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
print(int(round(t(sys.argv[2]) - t(sys.argv[1]))))' "$renew_a" "$acquire_b")
  if [ "$gap" -ge 15 ] && [ "$gap" -le 18 ]; then
    ok "b took the Lease $gap s after a's last renewal ($renew_a -> $acquire_b): not before its 15 s, within one 2 s retry after"
  else
    bad "b took the Lease $gap s after a's last renewal ($renew_a -> $acquire_b); 15 to 17 s (+1 for rounding) expected"
  fi
else
  bad "b never took the Lease (holder '$(holder)')"
fi
wait_for 10 "grep -q 'leading: this replica (b)' '$DIR/tide/tide-b.log'" && ok "b logs that it leads now" || bad "b never logged that it leads"
TIDE_PID=$PID_b
bound() {
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=kueue.x-k8s.io/pod-group-name"
  jget 'sum(1 for p in d["items"] if p["spec"].get("nodeName"))'
}
wait_for 90 '[ "$(bound)" = 6 ]' && ok "all 6 pods bound after the takeover" || bad "pods bound: $(bound) of 6"
n=$(nodes)
[ "$n" = 6 ] && ok "6 nodes for 6 x 8 GPUs: nothing bought twice" || bad "$n nodes for 6 x 8 GPUs"
sleep 6
n=$(nodes)
[ "$n" = 6 ] && ok "still 6 nodes a few loops later" || bad "$n nodes a few loops later"
# Every node a bought is in the shared store, and b bought only the rest.
bought_a=$(grep -c "tide: bought node" "$DIR/tide/tide-a.log" || true)
bought_b=$(grep -c "tide: bought node" "$DIR/tide/tide-b.log" || true)
[ "$bought_a" -ge 1 ] && [ "$bought_b" -ge 2 ] && [ "$((bought_a + bought_b))" = 6 ] && ok "a bought $bought_a nodes before the kill, b the other $bought_b" ||
  bad "a bought $bought_a, b $bought_b nodes: 6 wanted in all"
grep -q "tide: bought node" "$DIR/tide/tide-b.log" && [ "$(grep -m1 -n 'tide: bought node' "$DIR/tide/tide-b.log" | cut -d: -f1)" -gt "$(grep -m1 -n 'leading: this replica (b)' "$DIR/tide/tide-b.log" | cut -d: -f1)" ] &&
  ok "b bought only after it led" || { [ "$bought_b" = 0 ] && ok "b bought nothing (a had bought all)" || bad "b bought before it led"; }
if command -v sqlite3 > /dev/null; then
  rows=$(sqlite3 "$DIR/tide/state.db" "select count(*) from instances" 2>/dev/null || echo "?")
  [ "$rows" = 6 ] && ok "the shared store holds 6 instances" || bad "the shared store holds $rows instances"
fi
