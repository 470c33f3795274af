#!/usr/bin/env bash
# tide run on Kubernetes with the exec provider and a cloud whose machines
# join the cluster by themselves (fake_cloud.py): each machine picks its own
# id (vm-N) and its node registers as ip-10-0-0-N with spec.providerID
# fake:///zone-a/vm-N, not under the name tide asked for. A gang of 2 x 8
# GPUs waits: tide buys two machines and no more, matches each joined node to
# its machine by provider id, binds the gang there, and once the pods have
# completed and the nodes idled, deletes both machines and their Node objects.
. "$(dirname "$0")/lib.sh"
k8s_init exec-cloud
k8s_start
CLOUD=$(cd "$(dirname "$0")" && pwd)/fake_cloud.py
tide_config "  - {name: a100-od, instance_type: {gpus: 8}, price_per_hour: 30, max_nodes: 4, boot_delay: 2s}"
sed -i "s|  provider: {kind: kwok}|  provider: {kind: exec, create: [$CLOUD, $DIR/env, $DIR/cloud.json, create], delete: [$CLOUD, $DIR/env, $DIR/cloud.json, delete], list: [$CLOUD, $DIR/env, $DIR/cloud.json, list]}|" "$DIR/tide/cluster.yaml"
grep -q "kind: exec" "$DIR/tide/cluster.yaml" || { bad "the exec provider is not configured"; exit 1; }
tide_start
gang_job llm 2 8 15s
machines() { python3 -c 'import json, sys; print(" ".join(i["id"] for i in json.load(open(sys.argv[1]))["instances"]))' "$DIR/cloud.json" 2>/dev/null; }
nodes() { api GET "/api/v1/nodes?labelSelector=tide.dev/pool"; jget '" ".join(sorted(n["metadata"]["name"] + "=" + n["spec"].get("providerID", "") for n in d["items"]))'; }
bound() { pods_of llm | awk '$3 ~ /^ip-10-0-0-/ && $2 == "Running"' | wc -l; }
if wait_for 60 '[ "$(bound)" = 2 ]'; then
  ok "the gang runs on the nodes that joined by themselves: $(pods_of llm | tr '\n' ';')"
else
  bad "the gang: $(pods_of llm | tr '\n' ';'); nodes: $(nodes); machines: $(machines)"
fi
[ "$(machines)" = "vm-1 vm-2" ] && ok "two machines bought, no more: $(machines)" || bad "machines: $(machines)"
[ "$(nodes)" = "ip-10-0-0-1=fake:///zone-a/vm-1 ip-10-0-0-2=fake:///zone-a/vm-2" ] && ok "their nodes: $(nodes)" || bad "nodes: $(nodes)"
sleep 6  # more loops with the machines up: still no third
[ "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["next"])' "$DIR/cloud.json")" = 3 ] && ok "no other create in the meantime" || bad "more creates: $(cat "$DIR/cloud.json")"
t=$(date +%s.%N)
if wait_for 90 '[ -z "$(machines)" ] && [ -z "$(nodes)" ]'; then
  ok "after the pods completed and the nodes idled, both machines and Node objects are gone ($(awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s)"
else
  bad "left: machines $(machines); nodes $(nodes)"
fi
grep -q "released node ip-10-0-0-" "$DIR/tide/tide.log" && ok "the log names the joined node: $(grep -m1 'released node ip-10-0-0-' "$DIR/tide/tide.log" | cut -c22-200)" || bad "no release of ip-10-0-0-* in tide's log: $(grep -m2 'released' "$DIR/tide/tide.log")"
