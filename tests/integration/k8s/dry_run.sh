#!/usr/bin/env bash
# tide run --dry-run on Kubernetes: with a gang waiting and no nodes, tide
# prints the plan with its reasons (buy, and where it would bind) and
# changes nothing: no Node created, no pod bound, no pod status written, no
# eviction, no Event.
. "$(dirname "$0")/lib.sh"
k8s_init dry-run
k8s_start
tide_config "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 10, boot_delay: 5s}"
gang_job g1 2 8 10m
tide_start --dry-run
if wait_for 20 'grep -q "\[dry-run\] plan: scale-up pool=a100-od count=2 jobs=default/g1" "$DIR/tide/tide.log"'; then
  ok "the plan, with its reason: $(grep -m1 '\[dry-run\] plan: scale-up' "$DIR/tide/tide.log" | cut -c22-200)"
else
  bad "no dry-run scale-up plan in the log"
fi
sleep 6  # a few more loops
api GET "/api/v1/nodes"
[ "$(jget 'len(d["items"])')" = 0 ] && ok "no Node created" || bad "Nodes created: $(jget '[n["metadata"]["name"] for n in d["items"]]')"
api GET "/api/v1/namespaces/$NS/pods"
[ "$(jget 'sum(1 for p in d["items"] if p["spec"].get("nodeName"))')" = 0 ] && ok "no pod bound" || bad "pods bound"
[ "$(jget 'sum(1 for p in d["items"] for c in p["status"].get("conditions", []) if c.get("reason") == "Unschedulable")')" = 0 ] &&
  ok "no pod status written" || bad "a PodScheduled condition was written"
api GET "/api/v1/namespaces/$NS/events"
[ "$(jget 'sum(1 for e in d["items"] if e.get("reportingComponent") == "tide" or e.get("source", {}).get("component") == "tide")')" = 0 ] &&
  ok "no Event from tide" || bad "tide posted Events in a dry run"
grep -q "bought node\|bound job\|evict" "$DIR/tide/tide.log" && bad "the log says it acted: $(grep -m1 'bought node\|bound job\|evict' "$DIR/tide/tide.log")" || ok "the log says it acted on nothing"
