#!/usr/bin/env bash
# Least privilege, the other side: with the RBAC objects of deploy/kubernetes/
# applied to the test bed and a token of the ServiceAccount tide-system/tide,
#  - the ClusterRole's rules are exactly the list below (a verb added to the
#    manifest fails this test until it is added here, with its reason in the
#    manifest);
#  - a SelfSubjectAccessReview grants every verb of every rule, of the
#    ClusterRole and of the Lease's Role, and denies verbs outside them;
#  - real calls outside the role are refused with 403 (creating pods,
#    deleting namespaces, reading secrets, touching Leases elsewhere or
#    another Lease, minting tokens, widening its own role, ...), and real
#    calls of each rule inside it succeed.
# tide itself running with these rules: rbac.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rbac_lib.sh"
k8s_init rbac-refused
k8s_start
apply_manifests "$RBAC_KINDS"
tide_token

# The ClusterRole's and the Role's rules, as (group, resource, verb[, name]),
# against the list this test expects.
rules=$(python3 - "$DEPLOY" <<'PY'
import glob, json, sys, yaml
out = {}
for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")):
    for o in yaml.safe_load_all(open(f)):
        if o and o["kind"] in ("ClusterRole", "Role"):
            out[o["kind"]] = sorted(
                [g, r, v] + r_names
                for rule in o["rules"] for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]
                for r_names in ([[n] for n in rule["resourceNames"]] if "resourceNames" in rule else [[]]))
print(json.dumps(out))
PY
)
expected=$(python3 <<'PY'
import json
cluster = {("", "pods"): "list watch delete", ("", "pods/binding"): "create", ("", "pods/eviction"): "create",
           ("", "pods/status"): "patch", ("", "nodes"): "get list watch patch delete create", ("", "events"): "create",
           ("batch", "jobs"): "delete", ("scheduling.x-k8s.io", "podgroups"): "list watch",
           ("scheduling.volcano.sh", "podgroups"): "list watch"}
role = [["coordination.k8s.io", "leases", "create"], ["coordination.k8s.io", "leases", "get", "tide"],
        ["coordination.k8s.io", "leases", "update", "tide"]]
print(json.dumps({"ClusterRole": sorted([g, r, v] for (g, r), vs in cluster.items() for v in vs.split()),
                  "Role": sorted(role)}))
PY
)
if [ "$rules" = "$expected" ]; then
  ok "the ClusterRole and the Role grant exactly the expected verbs ($(printf '%s' "$rules" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["ClusterRole"]), "and", len(d["Role"]))'))"
else
  bad "the rules differ from the expected list: manifests $rules, expected $expected"
fi

# SelfSubjectAccessReviews as tide: every verb of every rule allowed (in all
# namespaces for the ClusterRole, in tide-system for the Role), and verbs
# outside them denied.
python3 - "$K8S_API" "$K8S_CA_FILE" "$DIR/sa-token" "$rules" > "$DIR/ssar.log" 2>&1 <<'PY' || bad "the SelfSubjectAccessReviews did not run: $(tail -3 "$DIR/ssar.log")"
import json, ssl, sys, urllib.request
api, ca, token_file, rules = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
token = open(token_file).read().strip()
ctx = ssl.create_default_context(cafile=ca)

def review(verb, group, resource, ns="", name=""):
    resource, _, sub = resource.partition("/")
    attrs = {"verb": verb, "group": group, "resource": resource, "subresource": sub, "namespace": ns, "name": name}
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attrs}}
    req = urllib.request.Request(api + "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                                 data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, context=ctx, timeout=30) as r:
        return json.load(r)["status"].get("allowed", False)

def check(want, verb, group, resource, ns="", name=""):
    got = review(verb, group, resource, ns, name)
    where = (f" in {ns}" if ns else " in all namespaces") + (f" named {name}" if name else "")
    what = f"{verb} {resource}{'.' + group if group else ''}{where}"
    print(("ok " if got == want else "bad ") + ("allowed: " if got else "denied: ") + what)

for g, r, v in rules["ClusterRole"]:
    check(True, v, g, r)
for g, r, v, *name in rules["Role"]:
    check(True, v, g, r, "tide-system", name[0] if name else "")
denied = [
    ("create", "", "pods", "default"), ("update", "", "pods", "default"), ("patch", "", "pods", "default"),
    ("get", "", "pods", "default"), ("create", "", "pods/exec", "default"), ("get", "", "pods/log", "default"),
    ("deletecollection", "", "pods", "default"),
    ("delete", "", "namespaces", ""), ("create", "", "namespaces", ""),
    ("get", "", "secrets", "kube-system"), ("list", "", "secrets", ""), ("get", "", "configmaps", "tide-system"),
    ("update", "", "nodes", ""), ("patch", "", "nodes/status", ""), ("deletecollection", "", "nodes", ""),
    ("create", "batch", "jobs", "default"), ("patch", "batch", "jobs", "default"), ("get", "batch", "jobs", "default"),
    ("update", "", "events", "default"), ("delete", "", "events", "default"),
    ("patch", "scheduling.x-k8s.io", "podgroups", "default"), ("create", "scheduling.volcano.sh", "podgroups", "default"),
    ("get", "scheduling.volcano.sh", "podgroups", "default"),
    ("create", "", "serviceaccounts/token", "tide-system"), ("create", "", "serviceaccounts", "tide-system"),
    ("update", "rbac.authorization.k8s.io", "clusterroles", ""), ("escalate", "rbac.authorization.k8s.io", "clusterroles", ""),
    ("bind", "rbac.authorization.k8s.io", "clusterroles", ""), ("create", "rbac.authorization.k8s.io", "clusterrolebindings", ""),
    ("impersonate", "", "users", ""), ("update", "apps", "deployments", "tide-system"),
    ("update", "coordination.k8s.io", "leases", "kube-node-lease"), ("update", "coordination.k8s.io", "leases", "kube-system"),
    ("create", "coordination.k8s.io", "leases", "default"), ("get", "coordination.k8s.io", "leases", "kube-system"),
    ("list", "coordination.k8s.io", "leases", "tide-system"), ("watch", "coordination.k8s.io", "leases", "tide-system"),
    ("delete", "coordination.k8s.io", "leases", "tide-system"),
]
for v, g, r, ns in denied:
    check(False, v, g, r, ns)
check(False, "update", "coordination.k8s.io", "leases", "tide-system", "someone-else")
check(False, "get", "coordination.k8s.io", "leases", "tide-system", "someone-else")
PY
n_ok=$(grep -c '^ok ' "$DIR/ssar.log" || true)
if [ "$(grep -c '^bad ' "$DIR/ssar.log" || true)" = 0 ] && [ "$n_ok" -gt 50 ]; then
  ok "SelfSubjectAccessReview: $(grep -c '^ok allowed' "$DIR/ssar.log") verbs of the rules allowed, $(grep -c '^ok denied' "$DIR/ssar.log") outside them denied"
else
  while read -r line; do bad "SelfSubjectAccessReview, expected otherwise: ${line#bad }"; done < <(grep '^bad ' "$DIR/ssar.log")
  [ "$n_ok" -gt 50 ] || bad "only $n_ok SelfSubjectAccessReviews as expected: $(tail -3 "$DIR/ssar.log")"
fi

# expect CODE WHAT METHOD PATH [BODY [CONTENT-TYPE]]: a real call as tide.
expect() {
  local want=$1 what=$2
  shift 2
  as_tide "$@"
  if [ "$CODE" = "$want" ]; then
    ok "$what: HTTP $CODE"
  else
    bad "$what: HTTP $CODE, expected $want: ${BODY:0:200}"
  fi
}

# Something to act on, made as the test bed's admin: a pod of scheduler tide
# and a Job, in default.
api POST /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},"spec":{"schedulerName":"tide","containers":[{"name":"c","image":"x"}]}}'
[ "$CODE" = 201 ] || bad "create pod p1 as admin: HTTP $CODE: ${BODY:0:200}"
gang_job j1 1 0 1h

# Refused: 403 each, and nothing changed.
expect 403 "create a pod (refused)" POST /api/v1/namespaces/default/pods \
  '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p2"},"spec":{"containers":[{"name":"c","image":"x"}]}}'
expect 403 "delete the namespace default (refused)" DELETE /api/v1/namespaces/default
expect 403 "delete the namespace tide-system, its own (refused)" DELETE /api/v1/namespaces/tide-system
expect 403 "list the secrets of kube-system (refused)" GET /api/v1/namespaces/kube-system/secrets
expect 403 "get a secret by name (refused)" GET /api/v1/namespaces/tide-system/secrets/anything
expect 403 "get a pod by name, not a verb tide uses (refused)" GET /api/v1/namespaces/default/pods/p1
expect 403 "patch a pod's spec or labels, only its status is allowed (refused)" PATCH /api/v1/namespaces/default/pods/p1 \
  '{"metadata":{"labels":{"x":"y"}}}' application/merge-patch+json
expect 403 "update a node (PUT; only patch is allowed) (refused)" PUT /api/v1/nodes/n0 \
  '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n0"}}'
expect 403 "update a Lease in kube-node-lease (refused)" PUT /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n0 \
  '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"n0","namespace":"kube-node-lease"}}'
expect 403 "create a Lease in default (refused)" POST /apis/coordination.k8s.io/v1/namespaces/default/leases \
  '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"tide"}}'
expect 403 "mint a token for its own ServiceAccount (refused)" POST /api/v1/namespaces/tide-system/serviceaccounts/tide/token \
  '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}'
expect 403 "widen its own ClusterRole (refused)" PUT /apis/rbac.authorization.k8s.io/v1/clusterroles/tide \
  '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"tide"},"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}'
expect 403 "bind itself to cluster-admin (refused)" POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings \
  '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"x"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"cluster-admin"},"subjects":[{"kind":"ServiceAccount","name":"tide","namespace":"tide-system"}]}'
expect 403 "change a Job's parallelism (refused: resizes are not carried out)" PATCH /apis/batch/v1/namespaces/default/jobs/j1 \
  '{"spec":{"parallelism":2}}' application/merge-patch+json
api GET /api/v1/namespaces/default
[ "$CODE" = 200 ] && [ -z "$(jget 'd["metadata"].get("deletionTimestamp", "")')" ] && ok "the namespace default is still there" \
  || bad "namespace default: HTTP $CODE"

# Allowed: each rule, by a real call.
expect 200 "list the pods of every namespace" GET "/api/v1/pods?limit=10"
expect 200 "watch the pods of every namespace" GET "/api/v1/pods?watch=1&timeoutSeconds=1"
expect 200 "list nodes" GET "/api/v1/nodes?limit=10"
expect 404 "list scheduler-plugins PodGroups: allowed, so 404 (no CRD here), not 403" GET \
  "/apis/scheduling.x-k8s.io/v1alpha1/podgroups?limit=10"
expect 403 "create a scheduler-plugins PodGroup: refused, 403 before the 404 of a missing CRD" POST \
  /apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups '{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"g"}}'
expect 201 "create a Node (the kwok provider's rule)" POST /api/v1/nodes \
  '{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"tide.dev/pool":"p"}},"status":{"capacity":{"nvidia.com/gpu":"8"},"allocatable":{"nvidia.com/gpu":"8"}}}'
expect 200 "get a Node" GET /api/v1/nodes/n1
expect 200 "cordon a Node (patch)" PATCH /api/v1/nodes/n1 '{"spec":{"unschedulable":false}}' application/merge-patch+json
expect 201 "bind a pod (pods/binding)" POST /api/v1/namespaces/default/pods/p1/binding \
  '{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},"target":{"apiVersion":"v1","kind":"Node","name":"n1"}}'
expect 200 "say why a pod waits (pods/status patch)" PATCH /api/v1/namespaces/default/pods/p1/status \
  '{"status":{"conditions":[{"type":"PodScheduled","status":"True","reason":"Checked","message":"rbac_refused"}]}}' \
  application/strategic-merge-patch+json
expect 201 "post an Event" POST /api/v1/namespaces/default/events \
  '{"apiVersion":"v1","kind":"Event","metadata":{"generateName":"p1."},"involvedObject":{"kind":"Pod","name":"p1","namespace":"default"},"reason":"Checked","message":"rbac_refused","type":"Normal","source":{"component":"tide"}}'
expect 201 "evict a pod (pods/eviction)" POST /api/v1/namespaces/default/pods/p1/eviction \
  '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p1","namespace":"default"},"deleteOptions":{"gracePeriodSeconds":0}}'
api POST /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p3"},"spec":{"schedulerName":"tide","containers":[{"name":"c","image":"x"}]}}'
expect 200 "delete a pod no controller owns" DELETE "/api/v1/namespaces/default/pods/p3?gracePeriodSeconds=0"
expect 200 "delete a Job" DELETE "/apis/batch/v1/namespaces/default/jobs/j1?propagationPolicy=Background"
expect 200 "delete a Node" DELETE /api/v1/nodes/n1
LEASE='{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"tide","namespace":"tide-system"},"spec":{"holderIdentity":"tide-0","leaseDurationSeconds":15}}'
expect 201 "create the Lease tide in tide-system" POST /apis/coordination.k8s.io/v1/namespaces/tide-system/leases "$LEASE"
expect 200 "get the Lease tide" GET /apis/coordination.k8s.io/v1/namespaces/tide-system/leases/tide
rv=$(jget 'd["metadata"]["resourceVersion"]')
expect 200 "take the Lease tide over (update)" PUT /apis/coordination.k8s.io/v1/namespaces/tide-system/leases/tide \
  "$(printf '%s' "$LEASE" | python3 -c 'import json,sys; d=json.load(sys.stdin); d["metadata"]["resourceVersion"]=sys.argv[1]; d["spec"]["holderIdentity"]="tide-1"; print(json.dumps(d))' "$rv")"
expect 403 "delete the Lease tide (refused)" DELETE /apis/coordination.k8s.io/v1/namespaces/tide-system/leases/tide
# create cannot be limited to a name, so another Lease in tide-system can be
# made; but not read back or updated.
expect 201 "create another Lease in tide-system (create has no name to check)" POST \
  /apis/coordination.k8s.io/v1/namespaces/tide-system/leases \
  '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"other"}}'
expect 403 "get that other Lease (refused)" GET /apis/coordination.k8s.io/v1/namespaces/tide-system/leases/other
expect 403 "update that other Lease (refused)" PUT /apis/coordination.k8s.io/v1/namespaces/tide-system/leases/other \
  '{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"other","namespace":"tide-system"}}'
