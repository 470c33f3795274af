#!/usr/bin/env bash
# tide run on Kubernetes, crash recovery: tide is killed with SIGKILL right
# after the kwok provider created a Node and before the store recorded it
# (fault injection), restarted, and killed again with SIGKILL while it gives
# nodes back. No node is bought twice, every gang runs, and in the end no
# Node object or instance is left: store and cluster agree.
. "$(dirname "$0")/lib.sh"
command -v sqlite3 > /dev/null || { echo "SKIP: sqlite3 is not installed (scripts/deps installs it)"; exit 77; }
k8s_init crash
k8s_start
tide_config "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 4, boot_delay: 2s}"
for g in c1 c2; do gang_job "$g" 1 8 10s; done
nodes() { api GET "/api/v1/nodes?labelSelector=tide.dev/pool"; jget 'len(d["items"])'; }
db() { sqlite3 "$DIR/tide/state.db" "$1"; }
TIDE_FAULT=kill-after-create "$TIDE" run -c "$DIR/tide/cluster.yaml" >> "$DIR/tide/tide.log" 2>&1 &
pid=$!
rc=0; wait "$pid" || rc=$?
[ "$rc" = 137 ] && ok "tide died by SIGKILL after the create (exit $rc)" || bad "tide exited $rc, expected 137"
[ "$(nodes)" = 1 ] && ok "the cluster holds the Node the store never saw committed" || bad "Nodes: $(nodes)"
[ "$(db "select count(*) from actions where state='pending' and kind='create'")" = 1 ] &&
  ok "the store has the create as pending (its key recorded before the call)" || bad "pending creates: $(db "select count(*) from actions where state='pending' and kind='create'")"
tide_start
wait_for 10 'grep -q "recovered: the create of node" "$DIR/tide/tide.log"' &&
  ok "the restart adopted it: $(grep -m1 'recovered:' "$DIR/tide/tide.log" | cut -d' ' -f3- | cut -c1-160)" || bad "no recovery line in tide's log"
succeeded() {
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=kueue.x-k8s.io/pod-group-name"
  jget 'sum(1 for p in d["items"] if p["status"].get("phase") == "Succeeded")'
}
wait_for 60 '[ "$(succeeded)" = 2 ]' && ok "both gangs ran and completed" || bad "gangs completed: $(succeeded)"
[ "$(nodes)" = 2 ] && ok "2 nodes for 2 x 8 GPUs: none bought twice" || bad "Nodes: $(nodes)"
# Killed again while it gives the idle nodes back (idle_release_after 15 s).
if wait_for 40 'grep -q "draining node\|released node" "$DIR/tide/tide.log"'; then
  kill -KILL "$TIDE_PID"; wait "$TIDE_PID" 2>/dev/null || true
  ok "tide killed with SIGKILL during the scale-down: $(grep -m1 'draining node\|released node' "$DIR/tide/tide.log" | cut -c22-120)"
else
  bad "no scale-down began"
fi
tide_start
wait_for 60 '[ "$(nodes)" = 0 ]' && ok "every Node given back after the restart (none leaked)" || bad "Nodes left: $(nodes)"
sleep 3
live=$(db "select count(*) from instances where deleted is null")
[ "$live" = 0 ] && ok "the store holds no live instance either" || bad "live instances in the store: $live"
total=$(db "select count(*) from instances")
[ "$total" = 2 ] && ok "the store recorded 2 instances in all: none bought twice" || bad "instances recorded: $total"
