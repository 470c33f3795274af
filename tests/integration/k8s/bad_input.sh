#!/usr/bin/env bash
# tide run on Kubernetes, an API server that stops answering: with a Job
# running on a node tide bought, the kube-apiserver is stopped (SIGSTOP).
# tide's loops fail with the reason in its log and /status, /healthz answers
# 503, and nothing is evicted or deleted; once the server answers again
# (SIGCONT) /healthz is 200 again and the node and the pod are as they were.
. "$(dirname "$0")/lib.sh"
k8s_init bad-input
k8s_start
tide_config "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 4, boot_delay: 2s}" \
  "  jobs: {checkpoint_grace: 3s}"
sed -i 's/kubernetes: {kubeconfig: \(.*\)}/kubernetes: {kubeconfig: \1, timeout: 2s}/' "$DIR/tide/cluster.yaml"
tide_start
gang_job steady 1 8 1h
running() { pods_of steady | grep -q " Running [^-]"; }
wait_for 40 running && ok "the Job runs: $(pods_of steady)" || bad "steady: $(pods_of steady)"
pod=$(pods_of steady | awk '{print $1}')
api GET "/api/v1/nodes?labelSelector=tide.dev/pool"
nodes_before=$(jget '[n["metadata"]["name"] for n in d["items"]]')
health() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/healthz"; }
wait_for 20 '[ "$(health)" = 200 ]' && ok "/healthz 200 while the API server answers" || bad "/healthz $(health)"
apiserver=$(awk '$1 == "kube-apiserver" {print $2}' "$DIR/pids")
lines_before=$(wc -l < "$DIR/tide/tide.log")
kill -STOP "$apiserver"
t=$(date +%s.%N)
if wait_for 40 '[ "$(health)" = 503 ]'; then
  ok "/healthz 503 $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s after the API server stopped: $(curl -s "http://127.0.0.1:$HTTP_PORT/healthz" | head -c 200)"
else
  bad "/healthz stayed $(health)"
fi
tail -n +"$lines_before" "$DIR/tide/tide.log" | grep -q "error" && ok "the log says why: $(tail -n +"$lines_before" "$DIR/tide/tide.log" | grep -m1 error | cut -c22-200)" || bad "no error in tide's log"
curl -s "http://127.0.0.1:$HTTP_PORT/status" | grep -q '"error"' && ok "/status carries the error" || bad "/status: $(curl -s "http://127.0.0.1:$HTTP_PORT/status" | head -c 300)"
sleep 10  # more failing loops
kill -CONT "$apiserver"
wait_for 40 '[ "$(health)" = 200 ]' && ok "/healthz 200 again once the API server answers" || bad "/healthz $(health) after SIGCONT"
api GET "/api/v1/nodes?labelSelector=tide.dev/pool"
[ "$(jget '[n["metadata"]["name"] for n in d["items"]]')" = "$nodes_before" ] && ok "the nodes are as they were: $nodes_before" || bad "nodes: before $nodes_before, after $(jget '[n["metadata"]["name"] for n in d["items"]]')"
api GET "/api/v1/namespaces/$NS/pods/$pod"
[ "$CODE" = 200 ] && [ "$(jget 'd["status"]["phase"]')" = Running ] && ok "the pod $pod still runs" || bad "pod $pod: HTTP $CODE"
grep -q "released node\|evicted job\|draining node" "$DIR/tide/tide.log" && bad "tide acted: $(grep -m1 'released node\|evicted job\|draining node' "$DIR/tide/tide.log")" || ok "nothing evicted, drained or released"
