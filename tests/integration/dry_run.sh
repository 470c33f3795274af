#!/bin/bash
# Dry run: `tide run --dry-run` prints the plan with its reasons and takes no
# action: no instance, no state file, no change in Slurm.
. "$(dirname "$0")/lib.sh"
lab_init dry-run "${PORT_BASE:-17200}"
write_tide_config
lab_start
jobscript work 30
for i in 1 2 3 4 5 6; do sbatch -p gpu --gres=gpu:2 -o /dev/null "$LAB/jobs/work.sh" >/dev/null; done
before=$(sinfo -h -N -p gpu -o '%N=%T' | sort | tr '\n' ' ')
out=$("$TIDE" run -c "$LAB/tide.yaml" --dry-run --loops 2 --no-http 2>&1) || { bad "tide run --dry-run failed: $out"; exit 1; }
echo "$out" > "$LAB/log/dry-run.log"
grep -q '\[dry-run\] plan: scale-up pool=' <<<"$out" && ok "plan printed: $(grep -m1 '\[dry-run\] plan: scale-up' <<<"$out" | cut -d' ' -f3-)" || bad "no scale-up in the dry-run plan: $out"
grep -q 'pending GPU jobs\|pending\|waited' <<<"$(grep '\[dry-run\] plan: scale-up' <<<"$out")" && ok "each action carries its reason" || bad "no reason on the scale-up line"
grep -q "bought node\|draining node\|sent USR1" <<<"$out" && bad "dry run acted: $(grep -m1 'bought node\|draining node\|sent USR1' <<<"$out")" || ok "no action taken"
[ -z "$(ls "$LAB/provider/instances" 2>/dev/null)" ] && ok "no instance at the provider" || bad "instances: $(ls "$LAB/provider/instances")"
[ ! -e "$LAB/state.db" ] && ok "no state file written" || bad "state.db was written"
after=$(sinfo -h -N -p gpu -o '%N=%T' | sort | tr '\n' ' ')
[ "$before" = "$after" ] && ok "Slurm's nodes unchanged ($after)" || bad "nodes changed: $before -> $after"
[ "$(squeue -h -t PD | wc -l)" = 6 ] && ok "all six jobs still pending" || bad "jobs: $(squeue -h -o '%i %T' | tr '\n' ' ')"
