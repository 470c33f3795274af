#!/bin/bash
# Spare nodes against slow boots (boot_hedge: 1), against a real slurmctld:
# a job waits, tide buys a node for it and a spare; the job is cancelled
# while both boot (20 s here), so no job waits for them any more, and tide
# gives both back before they join: drained in Slurm, deleted at the
# provider, never opened for jobs.
. "$(dirname "$0")/lib.sh"
lab_init hedge "${PORT_BASE:-17900}"
write_tide_config "    pending_grace: 1s
    boot_hedge: 1"
sed -i 's/boot_delay: 3s/boot_delay: 20s/g' "$LAB/tide.yaml"
lab_start
tide_start
jobscript work 30
job=$(sbatch --parsable -p gpu --gres=gpu:2 -o /dev/null "$LAB/jobs/work.sh")
if wait_for 15 'grep -q "spare against slow boots" "$LAB/log/tide.log"'; then
  t_buy=$(date +%s)
  ok "scale-up with a spare: $(grep -m1 -o 'plan: scale-up pool=[a-z]* count=[0-9]*' "$LAB/log/tide.log")"
else
  bad "no buy with a spare within 15 s of sbatch"
fi
wait_for 5 '[ "$(grep -c "bought node" "$LAB/log/tide.log")" -ge 2 ]'
bought=$(grep -c "bought node" "$LAB/log/tide.log" || true)
[ "$bought" = 2 ] && ok "bought 2 nodes: one for the job, one spare" || bad "bought $bought nodes"
scancel "$job"
if wait_for 15 '[ "$(grep -c "while it boots" "$LAB/log/tide.log")" -ge 2 ]'; then
  ok "both booting nodes released once no job waits: $(grep -m1 -o 'releasing node .*' "$LAB/log/tide.log")"
else
  bad "booting nodes not released; tide log: $(grep -E 'plan:|releasing|released' "$LAB/log/tide.log" | tail -5 | tr '\n' ';')"
fi
if wait_for 10 '[ -z "$(ls "$LAB/provider/instances" 2>/dev/null)" ]'; then
  left=$(( t_buy + 20 - $(date +%s) ))
  ok "no instance left at the provider, about $left s before their boot would have ended"
else
  bad "instances left: $(ls "$LAB/provider/instances" | tr '\n' ' ')"
fi
sleep 25  # past the boot: nothing joins and nothing is opened
grep -q "open for jobs" "$LAB/log/tide.log" && bad "a released node was opened: $(grep -m1 'open for jobs' "$LAB/log/tide.log")" || ok "no node was opened for jobs"
nodes=$(sinfo -h -N -p gpu -o '%N=%T' | sort | tr '\n' ' ')
grep -q "idle=\|mixed=\|alloc" <<<"$nodes" && bad "a node is usable in Slurm: $nodes" || ok "every node drained: $nodes"
[ "$(squeue -h | wc -l)" = 0 ] && ok "no job left" || bad "jobs: $(squeue -h -o '%i %T' | tr '\n' ' ')"
