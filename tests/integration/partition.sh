#!/bin/bash
# The partition limit: a job may use only the pools with a node in its
# partition. Partition od holds gpu[1-2], all in pool ondemand; a
# preemptible job there would go to spot (the expander prefers it:
# priority 10), but tide buys for it only in ondemand. The same job in
# partition gpu (every node) gets a spot node: the limit, not the
# preference, decided.
. "$(dirname "$0")/lib.sh"
lab_init partition "${PORT_BASE:-18000}"
write_tide_config "    pending_grace: 2s"
# Jobs of od and gpu are low priority and preemptible: spot is open to them.
sed -i 's/classes: \[{partition: high, class: high}\]/classes: [{partition: high, class: high}, {partition: od, class: low}, {partition: gpu, class: low}]/' "$LAB/tide.yaml"
lab_start
tide_start
jobscript work 30  # long enough that job K finds the od node busy
J=$(sbatch --parsable -p od --gres=gpu:8 -o /dev/null "$LAB/jobs/work.sh")
wait_for 30 'grep -q "bought node" "$LAB/log/tide.log"' && ok "a node bought for job $J: $(grep -m1 -o 'bought node [a-z0-9]* (pool [a-z-]*' "$LAB/log/tide.log")" || bad "nothing bought for job $J"
wait_for 60 '[ "$(jstate $J)" = RUNNING ]' && ok "job $J runs on $(squeue -h -j $J -o %N)" || bad "job $J never ran: $(jstate $J)"
grep -q "bought node gpu[12] (pool ondemand" "$LAB/log/tide.log" && ok "bought in pool ondemand, the only pool of partition od" || bad "not bought in ondemand: $(grep 'bought node' "$LAB/log/tide.log" | tr '\n' ';')"
grep -q "pool spot" "$LAB/log/tide.log" && bad "a spot node was bought for a job of partition od: $(grep 'pool spot' "$LAB/log/tide.log" | head -1)" || ok "no spot node bought for partition od"
# The control: the same job in partition gpu goes to spot.
K=$(sbatch --parsable -p gpu --gres=gpu:8 -o /dev/null "$LAB/jobs/work.sh")
wait_for 30 'grep -q "bought node gpu[34] (pool spot" "$LAB/log/tide.log"' && ok "job $K of partition gpu got a spot node: the pool preference is spot where a job may use it" || bad "no spot node for job $K: $(grep 'bought node' "$LAB/log/tide.log" | tr '\n' ';')"
wait_for 150 '[ "$(squeue -h | wc -l)" = 0 ]' && ok "both jobs completed" || bad "jobs left: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
tide_stop
