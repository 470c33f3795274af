#!/usr/bin/env bash
# tide run on Kubernetes, an API server that stops answering or answers
# badly. tide reaches the API server through a proxy (fake_kube_proxy) that
# forwards, answers 500, or answers garbage, as a file tells it. With a Job
# running on a node tide bought:
#   1. the kube-apiserver is stopped (SIGSTOP), then resumed;
#   2. the proxy answers every request with HTTP 500;
#   3. the proxy answers every request with 200 and a body that is not JSON.
# In each, tide's loops fail with the reason in its log and /status,
# /healthz answers 503, and nothing is evicted or deleted, however long it
# lasts (longer than the idle time after which an empty node is released);
# once good answers return /healthz is 200 again and the node and the pod
# are as they were.
. "$(dirname "$0")/lib.sh"
PROXY=${FAKE_KUBE_PROXY:?set FAKE_KUBE_PROXY}
k8s_init bad-input
k8s_start
echo pass > "$DIR/proxy-mode"
helper_start proxy "$PROXY" --port 0 --upstream "$K8S_API" --ca "$K8S_CA_FILE" --mode-file "$DIR/proxy-mode"
wait_for 10 'grep -q "listening on" "$DIR/logs/proxy.log"' || { bad "the proxy did not start: $(cat "$DIR/logs/proxy.log")"; exit 1; }
PROXY_URL=http://$(grep -o '127.0.0.1:[0-9]*' "$DIR/logs/proxy.log" | head -1)
cat > "$DIR/tide/proxy.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: "$PROXY_URL"}}]
users: [{name: tide, user: {token: "$TOKEN"}}]
contexts: [{name: proxy, context: {cluster: proxy, user: tide}}]
current-context: proxy
YAML
KUBECONFIG=$DIR/tide/proxy.kubeconfig tide_config \
  "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 4, boot_delay: 2s}" \
  "  jobs: {checkpoint_grace: 3s}"
sed -i 's/kubernetes: {kubeconfig: \(.*\)}/kubernetes: {kubeconfig: \1, timeout: 2s}/' "$DIR/tide/cluster.yaml"
tide_start
note "tide reaches the API server through the proxy at $PROXY_URL"
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
as_before() {
  api GET "/api/v1/nodes?labelSelector=tide.dev/pool"
  [ "$(jget '[n["metadata"]["name"] for n in d["items"]]')" = "$nodes_before" ] && ok "the nodes are as they were: $nodes_before" || bad "nodes: before $nodes_before, after $(jget '[n["metadata"]["name"] for n in d["items"]]')"
  api GET "/api/v1/namespaces/$NS/pods/$pod"
  [ "$CODE" = 200 ] && [ "$(jget 'd["status"]["phase"]')" = Running ] && ok "the pod $pod still runs" || bad "pod $pod: HTTP $CODE"
}
as_before

# bad_answers MODE WHAT LOG-PATTERN: the proxy answers MODE for 25 s.
bad_answers() {
  local lines t pattern=$3
  lines=$(wc -l < "$DIR/tide/tide.log")
  echo "$1" > "$DIR/proxy-mode"
  t=$(date +%s.%N)
  if wait_for 60 '[ "$(health)" = 503 ]'; then
    ok "$2: /healthz 503 $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s after: $(curl -s "http://127.0.0.1:$HTTP_PORT/healthz" | head -c 200)"
  else
    bad "$2: /healthz stayed $(health)"
  fi
  if wait_for 30 'tail -n +"$lines" "$DIR/tide/tide.log" | grep -q "$pattern"'; then
    ok "$2: the log says why: $(tail -n +"$lines" "$DIR/tide/tide.log" | grep -m1 "$pattern" | cut -c22-300)"
  else
    bad "$2: nothing matching '$pattern' in tide's log: $(tail -n +"$lines" "$DIR/tide/tide.log" | tail -3)"
  fi
  curl -s "http://127.0.0.1:$HTTP_PORT/status" | grep -q '"error"' && ok "$2: /status carries the error" || bad "$2: /status: $(curl -s "http://127.0.0.1:$HTTP_PORT/status" | head -c 300)"
  sleep 25  # longer than idle_release_after (15 s): an empty-looking node would be released
  echo pass > "$DIR/proxy-mode"
  t=$(date +%s.%N)
  if wait_for 60 '[ "$(health)" = 200 ]'; then
    ok "$2: /healthz 200 again $(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s after good answers return"
  else
    bad "$2: /healthz $(health) after good answers return"
  fi
  as_before
}
bad_answers 500 "HTTP 500 from the proxy" "HTTP 500"
bad_answers garbage "garbage from the proxy" "JSON\|json\|parse"
grep -q "released node\|evicted job\|draining node" "$DIR/tide/tide.log" && bad "tide acted: $(grep -m1 'released node\|evicted job\|draining node' "$DIR/tide/tide.log")" || ok "nothing evicted, drained or released"
