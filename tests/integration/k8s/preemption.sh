#!/usr/bin/env bash
# tide run on Kubernetes, preemption: the pool is at its max (one node) and
# runs a low-priority preemptible Job. A high-priority gang arrives: tide
# evicts the low Job's pod through the Eviction API (with the checkpoint
# grace), the Job controller recreates it and it waits, and the high gang is
# bound on the node.
. "$(dirname "$0")/lib.sh"
k8s_init preemption
k8s_start
priority_class high 100
priority_class low 10
POLICY_EXTRA=", preemption: {enabled: true, after: 0s}" tide_config \
  "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 1, boot_delay: 2s}" \
  "  jobs: {checkpoint_grace: 3s}"
tide_start
gang_job low 1 8 1h low
running_on_node() { pods_of "$1" | grep -q " Running [^-]"; }
wait_for 40 'running_on_node low' && ok "the low Job runs: $(pods_of low)" || bad "low Job: $(pods_of low)"
first=$(pods_of low | awk '{print $1}')
t=$(date +%s.%N)
gang_job high 1 8 1h high
if wait_for 60 'running_on_node high'; then
  ok "the high gang runs $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s after it arrived: $(pods_of high)"
else
  bad "high gang: $(pods_of high); low: $(pods_of low)"
fi
api GET "/api/v1/namespaces/$NS/pods/$first"
[ "$CODE" = 404 ] && ok "the low Job's pod $first was evicted" || bad "the low Job's pod $first is still there: $(pods_of low)"
if wait_for 30 'pods_of low | grep -q " Pending -"'; then
  ok "the Job controller recreated it, and it waits: $(pods_of low)"
else
  bad "low Job: $(pods_of low)"
fi
api GET "/api/v1/namespaces/$NS/events"
ev=$(jget 'sorted({e["reason"] for e in d["items"] if e.get("reportingComponent") == "tide" or e.get("source", {}).get("component") == "tide"})')
case "$ev" in *EvictedPreemption*) ok "Events from tide: $ev" ;; *) bad "no EvictedPreemption Event: $ev" ;; esac
grep -q "preempt" "$DIR/tide/tide.log" && ok "the log: $(grep -m1 'plan: preempt' "$DIR/tide/tide.log" | cut -c22-220)" || bad "no preemption in tide's log"
