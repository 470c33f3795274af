#!/usr/bin/env bash
# tide run on Kubernetes, spot: a preemptible Job runs on the spot pool's
# only node (max_nodes 1). The node gets a spot notice (the kwok provider's
# taint and time, set here with curl as a termination handler would): tide
# evicts the node's pod through the Eviction API before the interruption,
# the Job controller recreates it, and tide places it on other capacity (the
# noticed node, once empty, is given back at once, so the spot pool has room
# again: a new spot node). The noticed node is gone by its time; no pod is
# left bound to a deleted node.
. "$(dirname "$0")/lib.sh"
k8s_init spot
k8s_start
priority_class low 10
# Spot first (the priority expander), while it has room.
POLICY_EXTRA=", expanders: [priority, least-cost]" tide_config \
  "  - {name: a100-spot, instance_type: {gpus: 8}, tier: spot, price_per_hour: 10, max_nodes: 1, boot_delay: 2s, priority: 10}
  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 2, boot_delay: 2s, priority: 1}" \
  "  jobs: {checkpoint_grace: 5s}"
tide_start
gang_job work 1 8 1h low
on() { pods_of work | awk '$2 == "Running" {print $3}'; }
wait_for 40 '[ -n "$(on)" ]' && ok "the Job runs on $(on)" || bad "work: $(pods_of work)"
spot_node=$(on)
api GET "/api/v1/nodes/$spot_node"
[ "$(jget 'd["metadata"]["labels"].get("karpenter.sh/capacity-type")')" = spot ] && ok "$spot_node is a spot node" || bad "$spot_node is not spot: ${BODY:0:200}"
first=$(pods_of work | awk '{print $1}')
at=$(date -u -d '+30 seconds' +%Y-%m-%dT%H:%M:%SZ)
api PATCH "/api/v1/nodes/$spot_node" \
  "{\"metadata\":{\"annotations\":{\"tide.dev/interruption-at\":\"$at\"}},\"spec\":{\"taints\":[{\"key\":\"tide.dev/interruption\",\"effect\":\"NoSchedule\"}]}}" \
  application/merge-patch+json
[ "$CODE" = 200 ] && ok "spot notice on $spot_node: interrupted at $at" || bad "notice: HTTP $CODE ${BODY:0:200}"
t=$(date +%s.%N)
gone() { api GET "/api/v1/namespaces/$NS/pods/$first"; [ "$CODE" = 404 ]; }
if wait_for 25 gone; then
  ok "its pod was evicted $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s after the notice, before the interruption"
else
  bad "the pod on the noticed node was not evicted: $(pods_of work)"
fi
elsewhere() { local n; n=$(on); [ -n "$n" ] && [ "$n" != "$spot_node" ]; }
if wait_for 60 elsewhere; then
  api GET "/api/v1/nodes/$(on)"
  ok "recreated and placed on $(on) ($(jget 'd["metadata"]["labels"].get("karpenter.sh/capacity-type")'))"
else
  bad "work: $(pods_of work)"
fi
node_gone() { api GET "/api/v1/nodes/$spot_node"; [ "$CODE" = 404 ]; }
wait_for 60 node_gone && ok "the provider deleted $spot_node at its time" || bad "$spot_node still exists"
api GET "/api/v1/namespaces/$NS/pods"
orphans=$(jget '[p["metadata"]["name"] for p in d["items"] if p["spec"].get("nodeName") == "'"$spot_node"'" and p["status"].get("phase") not in ("Succeeded", "Failed")]')
[ "$orphans" = "[]" ] && ok "no pod left bound to the deleted node" || bad "pods still bound to $spot_node: $orphans"
