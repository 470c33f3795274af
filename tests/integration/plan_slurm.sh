#!/bin/bash
# tide plan --slurm: a small sweep submitted as a Slurm job array (one point
# per array task, on the lab's one plain node) prints the same table and
# writes the same JSON as the same sweep run locally, and leaves its script,
# point files and logs in the work directory. A point without a result is an
# error naming the point, its label and its log.
. "$(dirname "$0")/lib.sh"
lab_init plan-slurm "${PORT_BASE:-17800}"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
# Three points: the baseline, then threshold=1 and threshold=3.
PLAN=(plan -c "$SRC/examples/cluster.yaml" -t "$SRC/examples/week.csv" --sweep threshold=1,3 --baseline fixed:peak)
lab_start

# gpu1 as a plain node: its own slurmd, registered, then undrained.
/usr/sbin/slurmd -b -f "$SLURM_CONF" -N gpu1
wait_for 20 '[ -s "$LAB/run/slurmd-gpu1.pid" ]' || { bad "slurmd for gpu1 wrote no pid file"; exit 1; }
started "$(cat "$LAB/run/slurmd-gpu1.pid")" slurmd
wait_for 30 '[ "$(nstate gpu1)" = drained ]' && ok "gpu1 registered (drained)" || { bad "gpu1 is $(nstate gpu1), not drained"; exit 1; }
scontrol update nodename=gpu1 state=undrain
wait_for 30 '[ "$(nstate gpu1)" = idle ]' && ok "gpu1 undrained: idle" || { bad "gpu1 after undrain: $(nstate gpu1)"; exit 1; }

cd "$LAB"
if "$TIDE" "${PLAN[@]}" --json local.json > local.txt 2> local.err; then
  ok "local run: $(grep -c . local.txt) lines"
else
  bad "local run failed: $(cat local.err)"
fi

rc=0
timeout 300 "$TIDE" "${PLAN[@]}" --slurm --slurm-dir "$LAB/sweep" --sbatch-arg=--partition=gpu --json slurm.json \
  > slurm.txt 2> slurm.err || rc=$?
[ "$rc" = 0 ] && ok "--slurm run exited 0" || bad "--slurm run exited $rc: $(cat slurm.err)"
if diff local.txt slurm.txt > table.diff; then
  ok "--slurm prints the same table as the local run"
  sed 's/^/    /' slurm.txt
else
  bad "tables differ:"; cat table.diff
fi
cmp -s local.json slurm.json && ok "--slurm writes the same --json as the local run" || bad "--json differs: $(diff local.json slurm.json | head -20)"
[ -z "$(cat slurm.err)" ] && ok "nothing on stderr off a terminal" || bad "stderr: $(cat slurm.err)"
files=$(cd sweep && ls | sort | tr '\n' ' ')
[ "$files" = "point-0.json point-0.log point-1.json point-1.log point-2.json point-2.log sweep.sh " ] &&
  ok "the work directory holds $files" || bad "the work directory holds: $files"
grep -q "'--sweep=threshold=1,3'" sweep/sweep.sh && grep -q "'--baseline=fixed:peak'" sweep/sweep.sh &&
  ok "sweep.sh quotes every argument" || bad "sweep.sh: $(cat sweep/sweep.sh)"
label=$(jq -r '.points | length, .[0].label' sweep/point-2.json | tr '\n' ' ')
[ "$label" = "1 threshold=3 " ] && ok "point-2.json holds one point, threshold=3" || bad "point-2.json: $label"

# A work directory that is not empty is refused before anything is submitted.
rc=0
"$TIDE" "${PLAN[@]}" --slurm --slurm-dir "$LAB/sweep" > /dev/null 2> again.err || rc=$?
[ "$rc" = 2 ] && grep -q "sweep: exists and is not empty" again.err && ok "a used work directory is refused: $(cat again.err)" ||
  bad "a used work directory: exit $rc: $(cat again.err)"

# --point out of range.
rc=0
"$TIDE" "${PLAN[@]}" --point 3 > /dev/null 2> point.err || rc=$?
[ "$rc" = 2 ] && grep -q -- "--point 3: the sweep has 3 points" point.err && ok "--point 3 is refused: $(cat point.err)" ||
  bad "--point 3: exit $rc: $(cat point.err)"

# An array whose tasks never run (held, then cancelled): every point is
# missing, and each is named with its label and its log; exit status 1.
rc=0
"$TIDE" "${PLAN[@]}" --slurm --slurm-dir "$LAB/held" --sbatch-arg=--partition=gpu --sbatch-arg=--hold \
  > held.txt 2> held.err &
HELD_PID=$!
started "$HELD_PID" "tide plan --slurm (held)"
wait_for 30 '[ -n "$(squeue -h -n tide-plan -o %i)" ]' && ok "held array submitted: job $(squeue -h -n tide-plan -o %A | head -1)" || bad "no held array in the queue"
scancel -n tide-plan
wait "$HELD_PID" || rc=$?
[ "$rc" = 1 ] && ok "a gathered run with no results exits 1" || bad "held run exited $rc"
grep -q "3 of 3 points have no result" held.err &&
  grep -qF "point 0 (baseline fixed:peak): $LAB/held/point-0.json: missing; its log: $LAB/held/point-0.log" held.err &&
  grep -qF "point 2 (threshold=3)" held.err && ok "each missing point is named with its label and log" ||
  bad "held run's error: $(cat held.err)"
[ ! -s held.txt ] && ok "no table is printed when a point is missing" || bad "held run printed: $(cat held.txt)"
