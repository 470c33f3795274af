#!/usr/bin/env bash
# tide run in autoscale-only mode beside kube-scheduler (live.kubernetes.mode:
# autoscale): kube-scheduler places every pod; tide binds nothing, buys Node
# objects (kwok provider) only for the pods kube-scheduler marked
# PodScheduled=False/Unschedulable, and only whole gangs; and gives the nodes
# back once they idle. Gangs: a Kueue-style plain-pod group (2 x 8 GPUs), a
# pod alone (4 GPUs), and a Volcano group (annotation
# scheduling.k8s.io/group-name, its PodGroup's minMember; the PodGroup CRD is
# installed here, Volcano itself is not) that cannot fit whole under the
# pool's max_nodes, so nothing is bought for it.
. "$(dirname "$0")/lib.sh"
k8s_init autoscale
K8S_SCHEDULER=1 k8s_start
grep -q "kube-scheduler up" "$DIR/testbed.log" && ok "kube-scheduler runs in the test bed" || bad "kube-scheduler did not start"

# Volcano's PodGroup resource (only the fields tide reads are typed).
api POST /apis/apiextensions.k8s.io/v1/customresourcedefinitions '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"podgroups.scheduling.volcano.sh"},
 "spec":{"group":"scheduling.volcano.sh","scope":"Namespaced","names":{"plural":"podgroups","singular":"podgroup","kind":"PodGroup"},
  "versions":[{"name":"v1beta1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}'
[ "$CODE" = 201 ] || bad "create the Volcano PodGroup CRD: HTTP $CODE: ${BODY:0:200}"
wait_for 20 'api GET /apis/scheduling.volcano.sh/v1beta1/namespaces/default/podgroups; [ "$CODE" = 200 ]' || bad "the PodGroup CRD is not served"

tide_config "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 6, boot_delay: 3s}" "  kubernetes: {kubeconfig: $KUBECONFIG, mode: autoscale}" 
# tide_config wrote one kubernetes: line already; keep the autoscale one.
python3 - "$DIR/tide/cluster.yaml" <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().split("\n")
seen = [i for i, l in enumerate(lines) if l.startswith("  kubernetes:")]
del lines[seen[0]]
open(p, "w").write("\n".join(lines))
PY
tide_start
grep -q "autoscale-only" "$DIR/tide/tide.log" && ok "tide started in autoscale-only mode" || bad "no autoscale-only in tide's start line: $(grep started "$DIR/tide/tide.log")"

# plain_job NAME PODS GPUS COMPLETE-AFTER [GROUP-JSON]: a Job of default-scheduler pods.
plain_job() {
  api POST "/apis/batch/v1/namespaces/$NS/jobs" "$(python3 - "$@" <<'PY'
import json, sys
name, pods, gpus, after = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
meta = json.loads(sys.argv[5]) if len(sys.argv) > 5 else {}
tmpl_meta = {"labels": meta.get("labels", {}), "annotations": dict(meta.get("annotations", {}), **{"tide.dev/complete-after": after})}
print(json.dumps({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
  "spec": {"parallelism": pods, "completions": pods, "backoffLimit": 10, "template": {"metadata": tmpl_meta,
    "spec": {"restartPolicy": "Never", "containers": [{"name": "train", "image": "train:latest",
      "resources": {"requests": {"nvidia.com/gpu": gpus, "cpu": "1"}, "limits": {"nvidia.com/gpu": gpus}}}]}}}}))
PY
)"
  [ "$CODE" = 201 ] || bad "create Job $1: HTTP $CODE: ${BODY:0:200}"
}
nodes() { api GET "/api/v1/nodes?labelSelector=tide.dev/pool"; jget 'len(d["items"])'; }
bound_of() { # bound_of SELECTOR: pods bound
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=$1"
  jget 'sum(1 for p in d["items"] if p["spec"].get("nodeName"))'
}

plain_job g1 2 8 40s '{"labels": {"kueue.x-k8s.io/pod-group-name": "g1", "app": "t"}, "annotations": {"kueue.x-k8s.io/pod-group-total-count": "2"}}'
plain_job solo 1 4 40s '{"labels": {"app": "t"}}'
unsched() {
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=app=t"
  jget 'sum(1 for p in d["items"] for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled" and c["status"] == "False" and c.get("reason") == "Unschedulable")'
}
wait_for 30 '[ "$(unsched)" -ge 1 ]' && ok "kube-scheduler marked the pods Unschedulable (no nodes)" || bad "no pod marked Unschedulable"
wait_for 60 '[ "$(bound_of app=t)" = 3 ]' && ok "kube-scheduler placed all 3 pods on the nodes tide bought" || bad "pods bound: $(bound_of app=t) of 3"
n=$(nodes)
[ "$n" = 3 ] && ok "3 nodes bought for 2 x 8 + 1 x 4 GPUs, no more" || bad "$n nodes bought for 2 x 8 + 1 x 4 GPUs"
api GET "/api/v1/namespaces/$NS/events"
binders=$(jget 'sorted({(e.get("reportingComponent") or e.get("source", {}).get("component", "")) for e in d["items"] if e["reason"] == "Scheduled"})')
case "$binders" in
  *default-scheduler*) ok "the pods were bound by kube-scheduler: $binders" ;;
  *) bad "Scheduled events not from kube-scheduler: $binders" ;;
esac
case "$binders" in *'"tide"'*) bad "tide bound a pod in autoscale-only mode" ;; esac
grep -q "binding\|bound .* to" "$DIR/tide/tide.log" && bad "tide's log shows a binding: $(grep -m1 'binding\|bound .* to' "$DIR/tide/tide.log")" || ok "tide bound nothing"
# tide left the PodScheduled condition to kube-scheduler and only added Events.
api GET "/api/v1/namespaces/$NS/events"
waiting=$(jget 'sum(1 for e in d["items"] if e["reason"] == "Waiting" and (e.get("reportingComponent") == "tide" or e.get("source", {}).get("component") == "tide"))')
[ "${waiting:-0}" -ge 1 ] && ok "tide posted Waiting Events ($waiting) on the pods it bought for" || bad "no Waiting Event from tide"

# A Volcano gang of 5 x 8 GPUs, minMember 5: only 3 more nodes fit under
# max_nodes 6, so tide buys none of them (all or nothing).
api POST "/apis/scheduling.volcano.sh/v1beta1/namespaces/$NS/podgroups" '{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"big"},"spec":{"minMember":5}}'
[ "$CODE" = 201 ] || bad "create PodGroup big: HTTP $CODE: ${BODY:0:200}"
plain_job big 5 8 10m '{"labels": {"app": "big"}, "annotations": {"scheduling.k8s.io/group-name": "big"}}'
big_unsched() {
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=app=big"
  jget 'sum(1 for p in d["items"] for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled" and c.get("reason") == "Unschedulable")'
}
wait_for 30 '[ "$(big_unsched)" = 5 ]' && ok "kube-scheduler marked the 5 pods of the Volcano gang Unschedulable" || bad "Volcano gang pods marked: $(big_unsched) of 5"
sleep 8  # four loops
curl -s "http://127.0.0.1:$HTTP_PORT/status" > "$DIR/status.json"
n=$(nodes)
[ "$n" = 3 ] && ok "nothing bought for a gang that cannot fit whole (still 3 nodes)" || bad "$n nodes: bought part of a gang that cannot fit"
# The plan says why: the whole gang has no room (its size from the PodGroup).
why=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" | ".join(a["reason"] for a in d.get("plan", []) if "default/big (5x8 GPUs)" in a.get("reason", "")))' "$DIR/status.json")
case "$why" in
  *"no pool has room"*) ok "tide's plan says why: $why" ;;
  *) bad "no plan entry for the Volcano gang default/big (5x8 GPUs): $(head -c 600 "$DIR/status.json")" ;;
esac
api DELETE "/apis/batch/v1/namespaces/$NS/jobs/big?propagationPolicy=Background"

# Scale down: g1 and solo complete (40 s), their nodes idle, tide gives them back.
if wait_for 150 '[ "$(nodes)" = 0 ]'; then
  ok "all nodes given back once idle"
else
  bad "nodes left: $(nodes)"
fi
grep -q "released\|releasing" "$DIR/tide/tide.log" && ok "tide logged the releases" || bad "no release in tide's log"
