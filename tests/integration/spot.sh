#!/bin/bash
# Spot interruption: the provider's notice makes tide send the job on the
# node its checkpoint signal before the node is killed; the job is requeued,
# completes on replacement capacity, and the lost work is counted.
. "$(dirname "$0")/lib.sh"
lab_init spot "${PORT_BASE:-17300}"
write_tide_config "    pending_grace: 3s"
# Jobs of partition gpu are low priority and preemptible: they may run on spot.
sed -i 's/classes: \[{partition: high, class: high}\]/classes: [{partition: high, class: high}, {partition: gpu, class: low}]/' "$LAB/tide.yaml"
lab_start
tide_start
jobscript train 40
J=$(sbatch --parsable -p gpu --gres=gpu:8 --requeue -o /dev/null "$LAB/jobs/train.sh")
wait_for 60 '[ "$(jstate $J)" = RUNNING ]' && ok "job $J runs on $(squeue -h -j $J -o %N)" || { bad "job $J never ran: $(jstate $J)"; exit 1; }
grep -q "bought node $(squeue -h -j $J -o %N) (pool spot" "$LAB/log/tide.log" && ok "its node is from the spot pool" || bad "not a spot node: $(grep -m1 'bought node' "$LAB/log/tide.log")"
node=$(squeue -h -j "$J" -o %N)
"$TIDE" local interrupt -c "$LAB/tide.yaml" "$node" --notice 20s >/dev/null && ok "interruption of $node injected (notice 20 s)" || bad "interruption injection failed"
log="$LAB/jobs/train-$J.log"
wait_for 25 'grep -q "checkpoint signal" "$log"' && ok "job $J got its checkpoint signal (USR1)" || bad "no checkpoint signal: $(cat "$log" 2>/dev/null)"
wait_for 30 '[ "$(squeue -h -j $J -o %T)" = PENDING ] || grep -q "restart=1" "$log"' && ok "job $J requeued" || bad "job $J not requeued: $(jstate $J)"
# The signal came before the node went away.
wait_for 30 '! kill -0 $(cat "$LAB/run/slurmd-$node.pid" 2>/dev/null) 2>/dev/null' && ok "the provider killed $node's slurmd at the interruption time" || bad "slurmd of $node still alive"
first_sig=$(grep -n "checkpoint signal" "$log" | head -1 | cut -d: -f1)
[ -n "$first_sig" ] && ok "signal logged before the run ended (line $first_sig of the job log)"
wait_for 120 'grep -q "restart=1" "$log"' && ok "job $J restarted on replacement capacity: $(grep 'restart=1' "$log")" || bad "job $J did not restart: $(jstate $J)"
wait_for 90 'grep -q done "$log"' && ok "job $J completed after the requeue" || bad "job $J did not complete: $(jstate $J)"
m=$(curl -sf "http://127.0.0.1:$HTTP_PORT/metrics")
lost=$(grep '^tide_lost_work_gpu_seconds_total' <<<"$m" | awk '{print $2}')
[ -n "$lost" ] && [ "$(echo "$lost > 0" | bc)" = 1 ] && ok "lost work counted: $lost GPU-seconds" || bad "lost work not counted: $lost"
spot=$(grep '^tide_spot_interruptions_total' <<<"$m" | awk '{print $2}')
[ "${spot:-0}" -ge 1 ] 2>/dev/null && ok "spot interruptions: $spot" || bad "spot interruptions: ${spot:-none}"
tide_stop
