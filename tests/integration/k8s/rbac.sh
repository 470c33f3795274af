#!/usr/bin/env bash
# Least privilege, as deployed: the RBAC objects of deploy/kubernetes/
# (Namespace, ServiceAccount, ClusterRole and its binding, the leader Lease's
# Role and its binding) applied to the test bed, and `tide run` (kwok
# provider) with the configuration of deploy/kubernetes/30-configmap.yaml,
# talking to the API server with a token of the ServiceAccount tide-system/tide
# only. A gang Job arrives, tide buys nodes and binds its pods (scale up);
# the pods complete, tide releases the idle nodes and their Node objects are
# deleted (scale down). tide's log and /status must show no 403. Also checks
# that the other manifests (ConfigMap, PVC, Deployment) pass the API server's
# strict field validation, and that a pod of the Deployment's template is
# admitted under the namespace's restricted Pod Security Standard.
# What is refused with that token: rbac_refused.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rbac_lib.sh"
k8s_init rbac
k8s_start
apply_manifests "$RBAC_KINDS"
apply_manifests ConfigMap,PersistentVolumeClaim,Deployment --dry-run

# A pod made from the Deployment's template, as the ReplicaSet would make it
# (dry run: checked and admitted, not stored). The namespace enforces the
# restricted Pod Security Standard, so a missing runAsNonRoot, seccomp profile
# or capability drop is refused here.
pod=$(python3 - "$DEPLOY/50-deployment.yaml" <<'PY'
import json, sys, yaml
d = next(o for o in yaml.safe_load_all(open(sys.argv[1])) if o and o["kind"] == "Deployment")
t = d["spec"]["template"]
print(json.dumps({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": "tide-template-check", "namespace": "tide-system", "labels": t["metadata"]["labels"]},
                  "spec": t["spec"]}))
PY
)
api POST "/api/v1/namespaces/tide-system/pods?dryRun=All&fieldValidation=Strict" "$pod"
if [ "$CODE" = 201 ]; then
  ok "a pod of the Deployment's template is admitted under Pod Security 'restricted' (dry run)"
else
  bad "the Deployment's pod refused: HTTP $CODE: $(jget 'd["message"]')"
fi

tide_token
tide_kubeconfig "$DIR/tide/sa.kubeconfig"

# The ConfigMap's configuration, with what a test must change: the state, the
# kubeconfig (the ServiceAccount's token instead of the pod's), HTTP on
# 127.0.0.1 on a free port, and the test suite's short loop and idle times.
python3 - "$DEPLOY/30-configmap.yaml" "$DIR/tide" <<'PY'
import sys, yaml
cm = next(o for o in yaml.safe_load_all(open(sys.argv[1])) if o and o["kind"] == "ConfigMap")
c = yaml.safe_load(cm["data"]["cluster.yaml"])
d = sys.argv[2]
live = c["live"]
assert live["kubernetes"]["kubeconfig"] == "", "the ConfigMap must leave kubeconfig empty (in-cluster)"
live["state"] = d + "/state.db"
live["kubernetes"]["kubeconfig"] = d + "/sa.kubeconfig"
live["http"] = {"address": "127.0.0.1", "port": 0, "token_file": d + "/token"}
live["loop_interval"] = "2s"
c["policies"]["tide"].update({"scan_interval": "2s", "pending_grace": "0s", "idle_release_after": "15s", "boot_hedge": 0})
for p in c["pools"]:
    p["boot_delay"] = "3s"
yaml.safe_dump(c, open(d + "/cluster.yaml", "w"), sort_keys=False)
PY
LEADER=1  # the ConfigMap elects a leader through the Lease: the Role must allow it
POD_NAME=tide-rbac-0 tide_start

# Scale up: one gang of 2 x 8 GPUs, 20 s of work each.
gang_job rb1 2 8 20s
nodes() { api GET "/api/v1/nodes?labelSelector=tide.dev/pool"; jget 'len(d["items"])'; }
# gang_pods CONDITION: how many of the gang's pods meet it (a Python
# expression on the pod `p`).
gang_pods() {
  api GET "/api/v1/namespaces/$NS/pods?labelSelector=kueue.x-k8s.io/pod-group-name=rb1"
  jget "sum(1 for p in d['items'] if $1)"
}
BOUND='p["spec"].get("nodeName")' RUNNING='p["status"].get("phase") == "Running"'
SUCCEEDED='p["status"].get("phase") == "Succeeded"'
wait_for 30 '[ "$(nodes)" -ge 2 ]' && ok "tide created Node objects as tide-system/tide: $(nodes)" || bad "nodes: $(nodes)"
wait_for 60 '[ "$(gang_pods "$BOUND")" = 2 ]' && ok "the gang's 2 pods bound (pods/binding)" \
  || bad "pods bound: $(gang_pods "$BOUND") of 2"
wait_for 30 '[ "$(gang_pods "$RUNNING")" = 2 ]' && ok "both pods Running (kwok)" || bad "pods Running: $(gang_pods "$RUNNING") of 2"
# While the nodes boot, tide says why the gang waits: the pods' PodScheduled
# condition (pods/status patch) and a Waiting Event; then Scheduled Events.
api GET "/api/v1/namespaces/$NS/events"
ev=$(jget 'sorted({e["reason"] for e in d["items"] if e.get("reportingComponent") == "tide"})')
case "$ev" in
  *Scheduled*Waiting*) ok "Events posted by tide (events create): $ev" ;;
  *) bad "no Scheduled and Waiting Events from tide: $ev" ;;
esac

# Scale down: the pods complete, the nodes go idle, tide cordons them and
# deletes their Node objects (min_nodes 0).
wait_for 60 '[ "$(gang_pods "$SUCCEEDED")" = 2 ]' && ok "both pods completed" \
  || bad "pods completed: $(gang_pods "$SUCCEEDED") of 2"
wait_for 90 '[ "$(nodes)" = 0 ]' && ok "tide released the idle nodes: their Node objects deleted" || bad "nodes left: $(nodes)"
grep -q "released node\|gave back" "$DIR/tide/tide.log" && ok "the log says so: $(grep -m1 'released node\|gave back' "$DIR/tide/tide.log" | cut -c22-160)" || bad "no release in tide's log"

if [ "$LEADER" = 1 ]; then
  api GET /apis/coordination.k8s.io/v1/namespaces/tide-system/leases/tide
  holder=$(jget 'd["spec"]["holderIdentity"]')
  [ "$CODE" = 200 ] && [ "$holder" = tide-rbac-0 ] && ok "tide holds the Lease tide-system/tide as \$POD_NAME ($holder)" \
    || bad "the Lease tide-system/tide: HTTP $CODE, holder '$holder'"
fi

# Nothing refused along the way: no 403 in the log, none in /status.
if grep -qiE 'HTTP 403|forbidden|PermissionDenied' "$DIR/tide/tide.log"; then
  bad "tide was refused something: $(grep -m3 -iE 'HTTP 403|forbidden|PermissionDenied' "$DIR/tide/tide.log" | tr '\n' ' ')"
else
  ok "no 403/Forbidden in tide's log ($(wc -l < "$DIR/tide/tide.log") lines)"
fi
status=$(curl -sS "http://127.0.0.1:$HTTP_PORT/status" || true)
if [ -z "$status" ]; then
  bad "no /status from tide"
elif printf '%s' "$status" | grep -qiE 'HTTP 403|forbidden'; then
  bad "tide's /status reports a refusal: $(printf '%s' "$status" | grep -oiE '.{80}(HTTP 403|forbidden).{80}' | head -2)"
else
  ok "no 403/Forbidden in tide's /status"
fi
