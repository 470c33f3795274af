#!/bin/bash
# Bad input: a garbage reply from squeue or sinfo, a failing provider and an
# unreachable slurmctld cause no destructive action; each error is in the
# log and in /status, and tide carries on once the inputs are good again.
. "$(dirname "$0")/lib.sh"
lab_init bad-input "${PORT_BASE:-17700}"
# Wrappers around the real Slurm tools; a flag file turns each into garbage.
mkdir -p "$LAB/bin"
for tool in squeue sinfo scontrol scancel; do
  cat > "$LAB/bin/$tool" <<SH
#!/bin/sh
if [ -e "$LAB/etc/garbage-$tool" ]; then echo '{"jobs": [ {"job_id": "not-a-number"'; exit 0; fi
exec /usr/bin/$tool "\$@"
SH
  chmod +x "$LAB/bin/$tool"
done
write_tide_config "    pending_grace: 3s"
sed -i "s#    conf: etc/slurm.conf#    conf: etc/slurm.conf\n    bin_dir: $LAB/bin\n    timeout: 8s#" "$LAB/tide.yaml"
lab_start
tide_start
jobscript work 5
J=$(sbatch --parsable -p gpu --gres=gpu:8 -o /dev/null "$LAB/jobs/work.sh")
wait_for 90 '[ -z "$(jstate $J)" ]' && ok "job $J ran and completed" || bad "job $J: $(jstate $J)"
node=$(grep -m1 -o 'bought node [a-z0-9]*' "$LAB/log/tide.log" | awk '{print $3}')
[ -n "$node" ] && ok "tide bought $node for it" || bad "nothing bought"
# The node is idle now; release would come after 15 s. Garbage from squeue for 30 s:
touch "$LAB/etc/garbage-squeue"
sleep 30
grep -q "error: slurm:.*squeue" "$LAB/log/tide.log" && ok "garbage squeue reply logged: $(grep -m1 'error: slurm:' "$LAB/log/tide.log" | cut -c1-160)" || bad "no error logged for the garbage reply"
st=$(curl -sf "http://127.0.0.1:$HTTP_PORT/status")
grep -q '"ok": false' <<<"$st" && grep -q 'not valid JSON' <<<"$st" && ok "/status shows the failing loop and its error" || bad "/status: $(head -c 300 <<<"$st")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/healthz")
[ "$code" = 503 ] && ok "/healthz answers 503 while Slurm's replies are garbage" || bad "/healthz answered $code"
hz=$(curl -s "http://127.0.0.1:$HTTP_PORT/healthz")
grep -q "workload manager (slurm) cannot be read: .*squeue" <<<"$hz" && ok "/healthz says what is wrong: $(head -c 120 <<<"$hz")" || bad "/healthz: $hz"
grep -q "released node\|draining node" "$LAB/log/tide.log" && bad "tide released a node on a garbage reply" || ok "no node drained or released on garbage (30 s > idle time)"
[ "$(ls "$LAB/provider/instances" | wc -l)" = 1 ] && ok "the instance is untouched" || bad "instances: $(ls "$LAB/provider/instances")"
rm -f "$LAB/etc/garbage-squeue"; touch "$LAB/etc/garbage-sinfo"
sleep 8
grep -q "error: slurm:.*sinfo" "$LAB/log/tide.log" && ok "garbage sinfo reply logged" || bad "no sinfo error"
grep -q "released node\|draining node" "$LAB/log/tide.log" && bad "tide released a node on a garbage sinfo" || ok "no release on garbage sinfo"
rm -f "$LAB/etc/garbage-sinfo"
# Unreachable Slurm: stop slurmctld's process (SIGSTOP): commands time out.
ctld=$(cat "$LAB/run/slurmctld.pid")
kill -STOP "$ctld"
sleep 25
kill -CONT "$ctld"
grep -q "error: slurm:.*\(timed out\|Unable to contact\|did not finish\|reports errors\)" "$LAB/log/tide.log" && ok "unreachable Slurm logged: $(grep 'error: slurm:' "$LAB/log/tide.log" | grep -m1 -i "time\|contact\|finish\|reports errors" | cut -c1-160)" || bad "no error for the unreachable slurmctld"
grep -q "released node\|draining node" "$LAB/log/tide.log" && bad "tide released a node while Slurm was unreachable" || ok "no release while Slurm was unreachable"
# A garbage reply from the provider: a record it cannot read.
echo '{"id": "local-x", "pid": "not a pid"' > "$LAB/provider/instances/zz-garbage.json"
sleep 20
grep -q "error: provider:" "$LAB/log/tide.log" && ok "garbage from the provider logged: $(grep -m1 'error: provider:' "$LAB/log/tide.log" | cut -c1-160)" || bad "no provider error logged"
st=$(curl -sf "http://127.0.0.1:$HTTP_PORT/status")
grep -q 'provider:' <<<"$st" && ok "/status shows the provider error" || bad "/status lacks the provider error"
grep -q "released node\|draining node" "$LAB/log/tide.log" && bad "tide released a node on a garbage provider reply" || ok "no release on a garbage provider reply"
rm -f "$LAB/provider/instances/zz-garbage.json"
# Good inputs again: the idle node is released as usual.
wait_for 60 'grep -q "released node $node" "$LAB/log/tide.log"' && ok "with good replies again, idle $node is released" || bad "$node not released after recovery"
wait_for 20 "curl -sf http://127.0.0.1:$HTTP_PORT/healthz" && ok "/healthz is 200 again by itself" || bad "/healthz: $(curl -s "http://127.0.0.1:$HTTP_PORT/healthz")"
tide_stop
