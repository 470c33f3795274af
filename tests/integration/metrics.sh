#!/bin/bash
# Metrics: a real Prometheus scrapes tide's /metrics, and GPU utilization
# from a test exporter with DCGM metric names, read back through
# Prometheus, drives an idle-job reclaim. The protected job, idle too, is
# left alone; missing data is never read as idle.
. "$(dirname "$0")/lib.sh"
require prometheus
EXPORTER=${FAKE_DCGM_EXPORTER:?set FAKE_DCGM_EXPORTER}
lab_init metrics "${PORT_BASE:-17600}"
PROM_PORT=$((PORT + 6))
EXP_PORT=$((PORT + 7))
write_tide_config "    pending_grace: 3s
    reclaim: {below: 0.1, after: 20s, action: requeue}" "  metrics: {prometheus: \"http://127.0.0.1:$PROM_PORT\"}"
: > "$LAB/util.txt"
"$EXPORTER" --port "$EXP_PORT" --file "$LAB/util.txt" >> "$LAB/log/exporter.log" 2>&1 &
started $! exporter
cat > "$LAB/etc/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: tide
    static_configs: [{targets: ["127.0.0.1:$HTTP_PORT"]}]
  - job_name: dcgm
    static_configs: [{targets: ["127.0.0.1:$EXP_PORT"]}]
YAML
prometheus --config.file="$LAB/etc/prometheus.yml" --storage.tsdb.path="$LAB/prom" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >> "$LAB/log/prometheus.log" 2>&1 &
started $! prometheus
lab_start
tide_start
wait_for 30 "curl -sf http://127.0.0.1:$PROM_PORT/-/ready" && ok "Prometheus ready on 127.0.0.1:$PROM_PORT" || { bad "Prometheus did not start"; exit 1; }
jobscript idle 600
A=$(sbatch --parsable -p gpu --gres=gpu:8 --requeue -o /dev/null "$LAB/jobs/idle.sh")
P=$(sbatch --parsable -p gpu --gres=gpu:8 --requeue --comment "tide:protected" -o /dev/null "$LAB/jobs/idle.sh")
wait_for 90 '[ "$(jstate $A)" = RUNNING ] && [ "$(jstate $P)" = RUNNING ]' && ok "jobs $A and $P run" || { bad "jobs: $(jstate $A) $(jstate $P)"; exit 1; }
q() { curl -sf "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1"; }
wait_for 20 'q "up{job=\"tide\"}" | grep -q "\"1\"\]"' && ok "Prometheus scrapes tide's /metrics (up{job=\"tide\"} = 1)" || bad "tide not scraped: $(q 'up{job="tide"}')"
wait_for 20 'q tide_loops_total | grep -q tide_loops_total' && ok "tide_loops_total is in Prometheus" || bad "no tide_loops_total in Prometheus"
# No utilization series yet: the jobs must not be reclaimed however long that lasts.
sleep 25
grep -q "checkpoint signal" "$LAB/jobs/idle-$A.log" && bad "job $A reclaimed without utilization data" || ok "no data for 25 s: nothing reclaimed (missing is not idle)"
for n in $(squeue -h -t R -o %N | sort -u); do echo "$n 0" >> "$LAB/util.txt"; done
note "exporter now reports 0% on $(cut -d' ' -f1 "$LAB/util.txt" | tr '\n' ' ')"
wait_for 20 'q DCGM_FI_DEV_GPU_UTIL | grep -q Hostname' && ok "DCGM_FI_DEV_GPU_UTIL is in Prometheus" || bad "exporter not scraped"
wait_for 60 'grep -q "checkpoint signal" "$LAB/jobs/idle-$A.log"' && ok "idle job $A reclaimed: checkpoint signal after 20 s below 10%" || bad "job $A not reclaimed"
wait_for 30 'grep -q "requeued job $A\|cancelled job $A" "$LAB/log/tide.log"' && ok "job $A requeued by tide" || bad "job $A not requeued"
grep -q "checkpoint signal" "$LAB/jobs/idle-$P.log" && bad "protected job $P was reclaimed" || ok "protected idle job $P left alone"
grep -q "refused: reclaim job $P\|refused" "$LAB/log/tide.log" && note "tide's log: $(grep -m1 refused "$LAB/log/tide.log" | cut -d' ' -f3-)"
tide_stop
