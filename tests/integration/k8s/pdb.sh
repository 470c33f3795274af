#!/usr/bin/env bash
# tide run on Kubernetes, disruption budgets and do-not-disrupt markers: the
# pool is at its max (three nodes), running three Jobs of one 8-GPU pod:
#   budgeted  low priority (preemptible), under a PodDisruptionBudget with
#             minAvailable equal to its replicas;
#   marked    low priority, whose pod says
#             cluster-autoscaler.kubernetes.io/safe-to-evict: "false";
#   idle      normal priority, no marker, no budget.
# A stand-in DCGM exporter, read through a real Prometheus, reports all
# three pods' GPUs at 0% (the exporter's pod and namespace labels), and idle
# reclaim is on (below 10% for 10 s). A high-priority pod arrives. tide
# tries to preempt the budgeted pod, then to reclaim it; the API server
# answers 429, which tide counts as refused (/metrics) and tries again
# later, and it never deletes the pod instead. The idle pod, unprotected
# and not preemptible, is evicted for idleness through the Eviction API; its
# Job recreates it, and the high pod runs on the freed node. The marked pod
# is never touched.
. "$(dirname "$0")/lib.sh"
EXPORTER=${FAKE_DCGM_EXPORTER:?set FAKE_DCGM_EXPORTER}
command -v prometheus > /dev/null || { echo "SKIP: prometheus is not installed (scripts/deps installs it)"; exit 77; }
k8s_init pdb
k8s_start
priority_class high 100
priority_class low 10
priority_class normal 50
: > "$DIR/util.txt"
helper_start exporter "$EXPORTER" --port 0 --file "$DIR/util.txt"
wait_for 10 'grep -q "listening on" "$DIR/logs/exporter.log"' || { bad "the exporter did not start"; exit 1; }
EXP_ADDR=$(grep -o '127.0.0.1:[0-9]*' "$DIR/logs/exporter.log" | head -1)
PROM_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$DIR/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: dcgm
    static_configs: [{targets: ["$EXP_ADDR"]}]
YAML
helper_start prometheus prometheus --config.file="$DIR/prometheus.yml" --storage.tsdb.path="$DIR/prom" \
  --web.listen-address="127.0.0.1:$PROM_PORT"
POLICY_EXTRA=", preemption: {enabled: true, after: 0s}, reclaim: {below: 0.1, after: 10s, action: requeue}" tide_config \
  "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 3, boot_delay: 2s}" \
  "  jobs: {checkpoint_grace: 3s}
  metrics: {prometheus: \"http://127.0.0.1:$PROM_PORT\"}"
api POST "/apis/policy/v1/namespaces/$NS/poddisruptionbudgets" \
  '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"budgeted"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"job-name":"budgeted"}}}}'
[ "$CODE" = 201 ] || bad "create the PodDisruptionBudget: HTTP $CODE"
wait_for 30 "curl -sf http://127.0.0.1:$PROM_PORT/-/ready" || { bad "Prometheus did not start: $(tail -3 "$DIR/logs/prometheus.log")"; exit 1; }
tide_start
gang_job budgeted 1 8 1h low
gang_job marked 1 8 1h low '{"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}'
gang_job idle 1 8 1h normal
running_on_node() { pods_of "$1" | grep -q " Running [^-]"; }
wait_for 40 'running_on_node budgeted && running_on_node marked && running_on_node idle' &&
  ok "the three Jobs run: $(pods_of budgeted), $(pods_of marked), $(pods_of idle)" || bad "Jobs: $(pods_of budgeted); $(pods_of marked); $(pods_of idle)"
budgeted=$(pods_of budgeted | awk '{print $1}') marked=$(pods_of marked | awk '{print $1}') idle=$(pods_of idle | awk '{print $1}')
for p in "$budgeted" "$marked" "$idle"; do
  echo "$(pods_of "${p%-*}" | awk '{print $3}') 0 8 pod:$NS/$p" >> "$DIR/util.txt"
done
note "the exporter reports 0% on every GPU of $budgeted, $marked and $idle"
healthy() { api GET "/apis/policy/v1/namespaces/$NS/poddisruptionbudgets/budgeted"; [ "$(jget 'd["status"].get("currentHealthy", 0)')" = 1 ]; }
wait_for 30 healthy && ok "the disruption controller counts the budgeted pod healthy" || bad "the budget's status: ${BODY:0:300}"
gang_job high 1 8 1h high
refused() { curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" | awk '/^tide_actions_total\{action="refused"\}/ {print $2}'; }
if wait_for 40 '[ -n "$(refused)" ] && [ "$(refused)" -ge 2 ]'; then
  ok "the eviction was refused and tried again: tide_actions_total{action=\"refused\"} $(refused)"
else
  bad "no refusals counted: $(curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" | grep tide_actions_total | tr '\n' ' ')"
fi
grep -q "refused: preempt job $NS/budgeted.*disruption budget" "$DIR/tide/tide.log" &&
  ok "the log says why: $(grep -m1 'refused: preempt.*disruption budget' "$DIR/tide/tide.log" | cut -c22-220)" || bad "no refused preemption in tide's log"
idle_evicted() {
  api GET "/api/v1/namespaces/$NS/events"
  [ "$(jget 'sum(1 for e in d["items"] if e["involvedObject"].get("name") == "'"$idle"'" and e.get("reason", "") == "EvictedIdleReclaim")')" -ge 1 ]
}
if wait_for 60 idle_evicted; then
  ok "the idle pod $idle was evicted for idleness (Event EvictedIdleReclaim): $(grep -m1 "evicted job $NS/idle" "$DIR/tide/tide.log" | cut -c22-240)"
else
  bad "the idle pod was not evicted: $(pods_of idle); $(grep "job $NS/idle" "$DIR/tide/tide.log" | head -3)"
fi
grep -q "refused: reclaim job $NS/budgeted.*disruption budget" "$DIR/tide/tide.log" &&
  ok "reclaiming the idle budgeted pod was refused too: $(grep -m1 "refused: reclaim job $NS/budgeted" "$DIR/tide/tide.log" | cut -c22-200)" ||
  bad "no refused reclaim of the budgeted pod in tide's log"
recreated() { pods_of idle | awk -v old="$idle" 'NF && $1 != old' | grep -q .; }
wait_for 30 recreated && ok "its Job recreated it: $(pods_of idle | tr '\n' ';')" || bad "idle: $(pods_of idle | tr '\n' ';')"
wait_for 40 'pods_of high | grep -q " Running [^-]"' && ok "the high gang runs on the freed node: $(pods_of high)" || bad "high: $(pods_of high)"
api GET "/api/v1/namespaces/$NS/pods/$budgeted"
[ "$CODE" = 200 ] && [ "$(jget 'd["status"]["phase"]')" = Running ] && [ "$(jget 'd["metadata"].get("deletionTimestamp", "")')" = "" ] &&
  ok "the budgeted pod still runs, never deleted" || bad "the budgeted pod: HTTP $CODE ${BODY:0:200}"
api GET "/api/v1/namespaces/$NS/pods/$marked"
[ "$CODE" = 200 ] && [ "$(jget 'd["status"]["phase"]')" = Running ] && ok "the safe-to-evict: \"false\" pod still runs" || bad "the marked pod: HTTP $CODE"
api GET "/api/v1/namespaces/$NS/events"
[ "$(jget 'sum(1 for e in d["items"] if e["involvedObject"].get("name") == "'"$marked"'" and e.get("reason", "").startswith("Evict"))')" = 0 ] &&
  ok "no eviction of the marked pod was even tried" || bad "tide tried to evict the marked pod"
