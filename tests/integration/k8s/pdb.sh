#!/usr/bin/env bash
# tide run on Kubernetes, disruption budgets and do-not-disrupt markers: the
# pool is at its max (two nodes), running two low-priority preemptible Jobs:
# one under a PodDisruptionBudget with minAvailable equal to its replicas,
# one whose pod says cluster-autoscaler.kubernetes.io/safe-to-evict: "false".
# A high-priority gang arrives. tide tries to preempt the budgeted pod; the
# API server answers 429, which tide counts as refused (/metrics) and tries
# again later, and it never deletes the pod instead. The marked pod is never
# touched. The high gang waits.
. "$(dirname "$0")/lib.sh"
k8s_init pdb
k8s_start
priority_class high 100
priority_class low 10
POLICY_EXTRA=", preemption: {enabled: true, after: 0s}" tide_config \
  "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 2, boot_delay: 2s}" \
  "  jobs: {checkpoint_grace: 3s}"
api POST "/apis/policy/v1/namespaces/$NS/poddisruptionbudgets" \
  '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"budgeted"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"job-name":"budgeted"}}}}'
[ "$CODE" = 201 ] || bad "create the PodDisruptionBudget: HTTP $CODE"
tide_start
gang_job budgeted 1 8 1h low
gang_job marked 1 8 1h low '{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}'
running_on_node() { pods_of "$1" | grep -q " Running [^-]"; }
wait_for 40 'running_on_node budgeted && running_on_node marked' && ok "both low Jobs run: $(pods_of budgeted), $(pods_of marked)" || bad "low Jobs: $(pods_of budgeted); $(pods_of marked)"
budgeted=$(pods_of budgeted | awk '{print $1}') marked=$(pods_of marked | awk '{print $1}')
healthy() { api GET "/apis/policy/v1/namespaces/$NS/poddisruptionbudgets/budgeted"; [ "$(jget 'd["status"].get("currentHealthy", 0)')" = 1 ]; }
wait_for 30 healthy && ok "the disruption controller counts the budgeted pod healthy" || bad "the budget's status: ${BODY:0:300}"
gang_job high 1 8 1h high
refused() { curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" | awk '/^tide_actions_total\{action="refused"\}/ {print $2}'; }
if wait_for 40 '[ -n "$(refused)" ] && [ "$(refused)" -ge 2 ]'; then
  ok "the eviction was refused and tried again: tide_actions_total{action=\"refused\"} $(refused)"
else
  bad "no refusals counted: $(curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" | grep tide_actions_total | tr '\n' ' ')"
fi
grep -q "disruption budget" "$DIR/tide/tide.log" && ok "the log says why: $(grep -m1 'disruption budget' "$DIR/tide/tide.log" | cut -c22-220)" || bad "no refusal in tide's log"
api GET "/api/v1/namespaces/$NS/pods/$budgeted"
[ "$CODE" = 200 ] && [ "$(jget 'd["status"]["phase"]')" = Running ] && [ "$(jget 'd["metadata"].get("deletionTimestamp", "")')" = "" ] &&
  ok "the budgeted pod still runs, never deleted" || bad "the budgeted pod: HTTP $CODE ${BODY:0:200}"
api GET "/api/v1/namespaces/$NS/pods/$marked"
[ "$CODE" = 200 ] && [ "$(jget 'd["status"]["phase"]')" = Running ] && ok "the safe-to-evict: \"false\" pod still runs" || bad "the marked pod: HTTP $CODE"
api GET "/api/v1/namespaces/$NS/events"
[ "$(jget 'sum(1 for e in d["items"] if e["involvedObject"].get("name") == "'"$marked"'" and e.get("reason", "").startswith("Evict"))')" = 0 ] &&
  ok "no eviction of the marked pod was even tried" || bad "tide tried to evict the marked pod"
pods_of high | grep -q " Pending -" && ok "the high gang waits: $(pods_of high)" || bad "high: $(pods_of high)"
