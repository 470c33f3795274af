#!/bin/bash
# Protection: with the pools at their max, a high-priority job makes tide
# preempt a low-priority job; it never picks the protected one, and the
# protected job's node is not released while it runs.
. "$(dirname "$0")/lib.sh"
lab_init protection "${PORT_BASE:-17400}"
write_tide_config "    pending_grace: 3s
    preemption: {enabled: true, after: 5s}"
# Two on-demand nodes and no spot: the low-priority jobs hold all capacity a
# high-priority job may use.
sed -i '/name: spot/s/max_nodes: 2/max_nodes: 0/' "$LAB/tide.yaml"
sed -i 's/classes: \[{partition: high, class: high}\]/classes: [{partition: high, class: high}, {partition: gpu, class: low}]/' "$LAB/tide.yaml"
lab_start
tide_start
jobscript low 300
P=$(sbatch --parsable -p gpu --gres=gpu:8 --requeue --comment "tide:protected" -o /dev/null "$LAB/jobs/low.sh")
U=$(sbatch --parsable -p gpu --gres=gpu:8 --requeue -o /dev/null "$LAB/jobs/low.sh")
wait_for 90 '[ "$(jstate $P)" = RUNNING ] && [ "$(jstate $U)" = RUNNING ]' && ok "protected job $P and unprotected job $U run" || { bad "jobs: $P=$(jstate $P) $U=$(jstate $U)"; exit 1; }
jobscript high 10
H=$(sbatch --parsable -p high --gres=gpu:8 -o /dev/null "$LAB/jobs/high.sh")
wait_for 60 'grep -q "checkpoint signal" "$LAB/jobs/low-$U.log"' && ok "tide preempted the unprotected job $U (checkpoint signal)" || bad "no preemption of $U"
wait_for 60 '[ "$(jstate $H)" = RUNNING ] || [ -z "$(jstate $H)" ]' && ok "high-priority job $H ran" || bad "job $H: $(jstate $H)"
grep -q "checkpoint signal" "$LAB/jobs/low-$P.log" && bad "the protected job $P got a checkpoint signal" || ok "the protected job $P was never signalled"
[ "$(jstate $P)" = RUNNING ] && ok "the protected job $P still runs, restart count 0: $(grep -c start "$LAB/jobs/low-$P.log") start(s)" || bad "protected job $P: $(jstate $P)"
pnode=$(squeue -h -j "$P" -o %N)
grep -q "draining node $pnode\|released node $pnode" "$LAB/log/tide.log" && bad "the protected job's node $pnode was drained or released" || ok "the protected job's node $pnode was never drained or released"
grep -q "sent USR1 to job $P\|requeued job $P" "$LAB/log/tide.log" && bad "tide acted on the protected job" || ok "no action on job $P in tide's log"
tide_stop
