#!/usr/bin/env bash
# tide run on Kubernetes, release: two gangs of 1 x 8 GPUs run on two kwok
# nodes and complete (kwok, after 5 s). Once idle for idle_release_after
# (15 s here), tide cordons each idle node and deletes its Node object and
# instance, but never below the pool's min_nodes (1 here).
. "$(dirname "$0")/lib.sh"
k8s_init release
k8s_start
tide_config "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, min_nodes: 1, max_nodes: 10, boot_delay: 2s}"
tide_start
for g in r1 r2; do gang_job "$g" 1 8 5s; done
nodes() { api GET "/api/v1/nodes?labelSelector=tide.dev/pool"; jget 'len(d["items"])'; }
wait_for 30 '[ "$(nodes)" -ge 2 ]' && ok "nodes bought: $(nodes)" || bad "nodes: $(nodes)"
done_pods() {
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=kueue.x-k8s.io/pod-group-name"
  jget 'sum(1 for p in d["items"] if p["status"].get("phase") == "Succeeded")'
}
wait_for 60 '[ "$(done_pods)" = 2 ]' && ok "both gangs ran and completed" || bad "pods completed: $(done_pods)"
t_idle=$(date +%s.%N)
if wait_for 60 '[ "$(nodes)" = 1 ]'; then
  ok "idle nodes released $(awk -v a="$t_idle" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s after the pods completed (idle_release_after 15 s): 1 node left, the pool's min"
else
  bad "nodes left: $(nodes)"
fi
grep -q "released node\|gave back" "$DIR/tide/tide.log" && ok "the log says so: $(grep -m1 'released node\|gave back' "$DIR/tide/tide.log" | cut -c22-200)" || bad "no release in tide's log"
sleep 20  # past another idle time: the last node stays
[ "$(nodes)" = 1 ] && ok "the pool's last node stays (min_nodes 1)" || bad "nodes: $(nodes)"
api GET "/api/v1/nodes?labelSelector=tide.dev/pool"
[ "$(jget 'sum(1 for n in d["items"] if n["spec"].get("unschedulable"))')" = 0 ] && ok "the node left is not cordoned" || bad "the node left is cordoned"
