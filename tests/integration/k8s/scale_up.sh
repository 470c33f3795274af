#!/usr/bin/env bash
# tide run on Kubernetes, scale-up: three gangs of 2 x 8-GPU pods (batch/v1
# Jobs, Kueue plain-pod groups, schedulerName tide) and no nodes. tide buys
# Node objects through the kwok provider for all of them and no more, says
# in each waiting pod's PodScheduled condition why it waits, binds every gang
# whole once its nodes are Ready with GPUs, and posts Events; kwok runs the
# pods. Prints the time from the pending gangs to the first create request
# and to the last gang bound.
. "$(dirname "$0")/lib.sh"
k8s_init scale-up
k8s_start
tide_config "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 10, boot_delay: 5s}"
tide_start
t_submit=$(date +%s.%N)
for g in g1 g2 g3; do gang_job "$g" 2 8 10m; done
since() { awk -v a="$t_submit" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

nodes() { api GET "/api/v1/nodes?labelSelector=tide.dev/pool"; jget 'len(d["items"])'; }
if wait_for 30 '[ "$(nodes)" -ge 1 ]'; then
  ok "first Node created $(since) s after the gangs were submitted (tide's loop: 2 s)"
else
  bad "no Node created within 30 s"
fi
# While the nodes boot (5 s), the pods say why they wait.
waiting_msg() {
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=kueue.x-k8s.io/pod-group-name=g1"
  jget '" | ".join(c.get("message","") for p in d["items"] for c in p["status"].get("conditions",[]) if c["type"]=="PodScheduled" and c["status"]=="False" and c.get("reason")=="Unschedulable")'
}
if wait_for 20 '[ -n "$(waiting_msg)" ]'; then
  ok "a waiting pod says why: $(waiting_msg | cut -d'|' -f1)"
else
  bad "no PodScheduled=False/Unschedulable message on the waiting pods"
fi
bound() {
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=kueue.x-k8s.io/pod-group-name"
  jget 'sum(1 for p in d["items"] if p["spec"].get("nodeName"))'
}
if wait_for 90 '[ "$(bound)" = 6 ]'; then
  ok "all 6 pods bound $(since) s after the gangs were submitted"
else
  bad "pods bound: $(bound) of 6"
fi
running() {
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=kueue.x-k8s.io/pod-group-name"
  jget 'sum(1 for p in d["items"] if p["status"].get("phase") == "Running")'
}
wait_for 30 '[ "$(running)" = 6 ]' && ok "all 6 pods Running (kwok)" || bad "pods Running: $(running) of 6"
# Every gang whole: both of its pods bound.
api GET "/api/v1/namespaces/$NS/pods?labelSelector=kueue.x-k8s.io/pod-group-name"
halves=$(jget '",".join(g for g in {p["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] for p in d["items"]} if 0 < sum(1 for p in d["items"] if p["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] == g and p["spec"].get("nodeName")) < 2)')
[ -z "$halves" ] && ok "every gang bound whole" || bad "gangs bound in part: $halves"
n=$(nodes)
[ "$n" = 6 ] && ok "6 nodes bought for 6 x 8 GPUs, no more" || bad "$n nodes bought for 6 x 8 GPUs"
sleep 6  # a few more loops: nothing more is bought once the gangs run
n=$(nodes)
[ "$n" = 6 ] && ok "still 6 nodes a few loops later" || bad "$n nodes a few loops later"
api GET "/api/v1/namespaces/$NS/events"
ev=$(jget 'sorted({e["reason"] for e in d["items"] if e.get("source",{}).get("component") == "tide" or e.get("reportingComponent") == "tide"})')
case "$ev" in
  *Scheduled*Waiting*) ok "Events from tide: $ev" ;;
  *) bad "no Scheduled and Waiting Events from tide: $ev" ;;
esac
# Worth reading when it happens (a slow first list under load), not a failure.
if grep -q "error" "$DIR/tide/tide.log"; then
  note "tide logged errors: $(grep -m3 error "$DIR/tide/tide.log" | tr '\n' ' ')"
fi
