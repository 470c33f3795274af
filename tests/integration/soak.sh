#!/bin/bash
# Crash soak (issue 35, item 3): tide is killed with SIGKILL at random
# moments while a real Slurm and the local provider go through scale-ups,
# scale-downs, spot reclaims and preemptions, and restarted each time.
#
#   SOAK_TRIALS=10 SOAK_SEED=35003 [SOAK_OUT=DIR] TIDE=build/h-soak/tide bash tests/integration/soak.sh
#
# One lab for the whole soak: one slurmctld, one state.db, one provider
# directory. Each trial submits a workload drawn from a seeded generator
# (SOAK_SEED, printed, replays the same draws): short jobs that need nodes
# bought and leave them idle to be released, long low-priority preemptible
# jobs, a high-priority job that preempts them when the pools are at their
# max, a protected job (the Slurm comment tide:protected, in a partition of
# on-demand nodes only, in a preemptible class so that only the marker
# protects it) and a spot interruption injected through the local provider.
# tide is SIGKILLed after a random delay, or just after a random one of its
# actions; the checks run on the killed state; tide is restarted and, once
# its first loop has reconciled, the checks run again. After the last trial
# all work drains and everything is checked once more.
#
# Invariants (each violation counted once, by what it is about):
#   bought_twice  no two instances of one node alive at once, at the provider
#                 or in the store (every kill, after every restart, at the end)
#   leaked        after a restart: the provider's live instances are the
#                 store's, no create or delete from before the kill is still
#                 pending, no slurmd runs without an instance, no Slurm node
#                 without an instance is open for jobs; at the end nothing is
#                 live and every node is drained and powered down
#   jobs          every job submitted is known to Slurm in a state it can
#                 finish from (no FAILED, NODE_FAIL, CANCELLED, TIMEOUT, held);
#                 at the end every one is COMPLETED (scontrol and sacct -c, a
#                 requeue before is fine) and its own log says done
#   ledger        the store's cost ledger equals the provider's record of
#                 lifetimes (soak_check.pl): one entry per ended instance,
#                 start and end within 2 s, cost = price x lifetime, totals
#   protected     no protected job got a signal (its own trap log), was
#                 restarted, or has a stop on record in tide's store or log
# The script prints a table of trials, kills and violations per invariant
# and a line "SOAK_RESULT key=value ..." and fails if any count is not 0.
# Slurm's node and job states, each change with its time, go to
# soak/watch.log in the lab (kept when the soak fails; SOAK_OUT=DIR keeps
# it, the logs, the store and the provider's terminated.log in any case).
#
# Kills: half after a random delay (1-20 s), a third just after a random
# one of tide's actions (0-1.5 s after it logs a buy, release, drain,
# checkpoint signal or requeue), and one trial in six at the worst moment
# by tide's own fault injection (TIDE_FAULT=kill-after-create: right
# after the provider's create returned, before the store recorded it). The
# trial's remaining events (the high job, the interruption) happen while
# tide is down, for 0-3 s; then it is restarted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/soak_lib.sh"
require sqlite3
lab_init soak "${PORT_BASE:-19500}"
write_tide_config "    pending_grace: 2s
    preemption: {enabled: true, after: 5s}
    budget: {max_nodes: 0}"
sed -i 's/idle_release_after: 15s/idle_release_after: 10s/' "$LAB/tide.yaml"
# Partition gpu (all four nodes) and od (on-demand gpu[1-2]) are low and
# preemptible; high is high. The protected job runs in od: on spot, the
# provider's notice could reach it, and protection does not stop that.
sed -i 's/classes: \[{partition: high, class: high}\]/classes: [{partition: high, class: high}, {partition: gpu, class: low}, {partition: od, class: low}]/' "$LAB/tide.yaml"
# Slurm keeps finished jobs for the whole soak, and writes each job's end
# (a requeue too) where `sacct -c` reads it.
sed -i "s|^JobCompType=.*|JobCompType=jobcomp/filetxt\nJobCompLoc=$LAB/log/jobcomp.log|; s|^MinJobAge=.*|MinJobAge=14400|" "$SLURM_CONF"
lab_start
PRICES="gpu1=32,gpu2=32,gpu3=10,gpu4=10"
NODES="gpu1 gpu2 gpu3 gpu4"
SPOT_NODES="gpu3 gpu4"
S=$LAB/soak
mkdir -p "$S"
: > "$S/jobs"   # ID KIND TRIAL LOG
: > "$S/seen"   # provider instances seen live (soak_check.pl --seen)

# ---- the workload ----
submit() {  # KIND PARTITION GPUS SECONDS [sbatch args...]
  local kind=$1 part=$2 gpus=$3 secs=$4 name id
  shift 4
  name=${kind:0:1}$secs
  [ -x "$LAB/jobs/$name.sh" ] || jobscript "$name" "$secs"
  if id=$(sbatch --parsable -p "$part" --gres=gpu:"$gpus" --requeue -o /dev/null "$@" "$LAB/jobs/$name.sh" 2>>"$S/sbatch.err"); then
    echo "$id $kind $TRIAL $LAB/jobs/$name-$id.log" >> "$S/jobs"
    SUBMITTED="$SUBMITTED $kind:$id"
  else
    note "sbatch failed: $(tail -1 "$S/sbatch.err")"
  fi
}
soak_job() {  # KIND GPUS SECONDS
  case $1 in
    short|long) submit "$1" gpu "$2" "$3" ;;
    protected) submit protected od "$2" "$3" --comment tide:protected ;;
  esac
}
soak_high() { submit high high 8 "$high_s"; }
soak_interrupt() {  # PICK NOTICE: the PICK-th spot node that has an instance now
  local live=() n
  for n in $SPOT_NODES; do [ "$(live_instances "$n")" = 0 ] || live+=("$n"); done
  if [ ${#live[@]} = 0 ]; then INJECTED="$INJECTED none"; return; fi
  n=${live[$(( $1 % ${#live[@]} ))]}
  if "$TIDE" local interrupt -c "$LAB/tide.yaml" "$n" --notice "$2s" >>"$S/interrupt.log" 2>&1; then
    INJECTED="$INJECTED $n/${2}s"; INTERRUPTS=$((INTERRUPTS + 1))
  else
    INJECTED="$INJECTED $n:failed"
  fi
}

# ---- checks ----
slurmd_alive() { pgrep -f -- "slurmd .*-f $SLURM_CONF -N $1( |\$)" >/dev/null; }  # NODE
live_instances() { ls "$LAB/provider/instances/" 2>/dev/null | grep -c "^local-$1-" || true; }  # NODE: how many records
# The Slurm side of a leak: a slurmd without an instance, or a node without
# one that Slurm may give jobs to. final: every node drained and powered down.
slurm_nodes() {  # MODE
  local n st live
  for n in $NODES; do
    live=$(live_instances "$n")
    st=$(nstate "$n")
    if [ "$live" = 0 ] && slurmd_alive "$n"; then
      echo "VIOLATION leaked slurmd:$n:${TRIAL:-end} a slurmd runs for $n, which has no instance at the provider"
    fi
    if [ "$live" = 0 ] && ! [[ "$st" =~ drain|down ]]; then
      echo "VIOLATION leaked open:$n:${TRIAL:-end} Slurm may give jobs to $n ($st), which has no instance"
    fi
    if [ "$1" = final ] && [ "$st" != "drained~" ]; then
      echo "VIOLATION leaked end:$n $n is $st at the end, not drained and powered down"
    fi
  done
}
provider_store() {  # MODE [SINCE]
  perl "$SOAK_CHECK" --db "$LAB/state.db" --local-provider "$LAB/provider" --prices "$PRICES" \
    --mode "$1" --since "${2:-0}" --seen "$S/seen" 2>&1 | sed 's/^soak_check:/VIOLATION ledger checker soak_check:/' || true
}
# Every job Slurm has, as "ID STATE REASON RESTARTS".
slurm_jobs() {
  scontrol -o show job 2>/dev/null | perl -ne '
    my %f = map { /^(\w+)=(.*)$/ ? ($1, $2) : () } split / /;
    print "$f{JobId} $f{JobState} ", ($f{Reason} // "-"), " ", ($f{Restarts} // 0), "\n" if $f{JobId};' || true
}
jobs_check() {  # MODE
  local id kind trial log st reason restarts
  declare -A JST JRS
  while read -r id st reason restarts; do JST[$id]=$st; JRS[$id]=$reason; done < <(slurm_jobs)
  while read -r id kind trial log; do
    st=${JST[$id]:-}
    reason=${JRS[$id]:-}
    if [ -z "$st" ]; then
      echo "VIOLATION jobs unknown:$id job $id ($kind, trial $trial) is not known to Slurm"; continue
    fi
    case "$st" in
      PENDING|CONFIGURING|RUNNING|COMPLETING|COMPLETED|REQUEUED|RESIZING) ;;
      *) echo "VIOLATION jobs state:$id:$st job $id ($kind, trial $trial) is $st ($reason)"; continue ;;
    esac
    [[ "$reason" =~ [Hh]eld ]] && echo "VIOLATION jobs held:$id job $id ($kind, trial $trial) is held ($reason)"
    if [ "$1" = final ]; then
      [ "$st" = COMPLETED ] || echo "VIOLATION jobs end:$id job $id ($kind, trial $trial) is $st ($reason) at the end"
      grep -qx done "$log" 2>/dev/null || echo "VIOLATION jobs done:$id job $id ($kind, trial $trial) never logged done"
    fi
  done < "$S/jobs"
  if [ "$1" = final ]; then
    # Slurm's accounting of job ends (jobcomp, what sacct -c reads): every
    # job's last record is COMPLETED.
    sacct -c -n -P --format=JobID,State 2>/dev/null > "$S/sacct" || true
    while read -r id kind trial log; do
      st=$(grep "^$id|" "$S/sacct" | tail -1 | cut -d'|' -f2 || true)
      [ "$st" = COMPLETED ] || echo "VIOLATION jobs sacct:$id job $id ($kind, trial $trial): sacct -c says ${st:-nothing}"
    done < "$S/jobs"
  fi
}
protected_check() {
  local id kind trial log starts
  while read -r id kind trial log; do
    [ "$kind" = protected ] || continue
    if grep -qE '^(checkpoint signal|term)$' "$log" 2>/dev/null; then
      echo "VIOLATION protected signal:$id protected job $id (trial $trial) got a signal: $(grep -E '^(checkpoint signal|term)$' "$log" | tr '\n' ' ')"
    fi
    starts=$(grep -c '^start' "$log" 2>/dev/null || true)
    [ "${starts:-0}" -le 1 ] || echo "VIOLATION protected restart:$id protected job $id (trial $trial) started $starts times"
    grep -qE "(sent [A-Z0-9]+ to|requeued|cancelled|evicted) job $id( |$)" "$LAB/log/tide.log" &&
      echo "VIOLATION protected log:$id tide acted on protected job $id: $(grep -m1 -E "(sent [A-Z0-9]+ to|requeued|cancelled|evicted) job $id( |$)" "$LAB/log/tide.log")"
    local ev
    ev=$(sqlite3 "$LAB/state.db" "select kind || ' at ' || at from job_events where job = '$id' and kind != 'interrupted'" 2>/dev/null | tr '\n' ' ' || true)
    [ -z "$ev" ] || echo "VIOLATION protected store:$id tide's store has stops of protected job $id: $ev"
  done < "$S/jobs"
}
# check WHEN MODE [SINCE]: every check of this point; retried for up to 10 s
# while it finds something, since tide may be between two steps of one
# change (an instance created but not yet committed, a node deleted but not
# yet drained). What is still wrong after that is recorded.
check() {
  local when=$1 mode=$2 since=${3:-0} out=$S/check.out tries=1
  if [ "$mode" != kill ]; then tries=10; fi
  for i in $(seq 1 $tries); do
    {
      provider_store "$mode" "$since"
      jobs_check "$mode"
      protected_check
      if [ "$mode" != kill ]; then slurm_nodes "$mode"; fi
    } > "$out" || true
    if ! grep -q '^VIOLATION ' "$out" || [ "$i" = "$tries" ]; then break; fi
    sleep 1
  done
  record "$out" "$when"
  LAST_TOTALS=$(grep '^TOTALS ' "$out" | cut -d' ' -f2- || true)
}
# An action of tide's in its log since byte $1.
acted_since() {
  local -
  set +o pipefail
  tail -c +"$(($1 + 1))" "$LAB/log/tide.log" | grep -qE '(bought|released|releasing|draining) node|sent [A-Z0-9]+ to job|requeued job|gone at the provider'
}

# ---- the soak ----
# soak_start [FAULT]: tide, under TIDE_FAULT=FAULT if given; returns once
# its first loop is done (counted in /metrics, which tide publishes at the
# end of each loop; /healthz may say 503 for a passing fault, which is not
# what the soak is about) or it died (a fault's own SIGKILL).
first_loop() {
  local m
  m=$(curl -sf "http://127.0.0.1:$HTTP_PORT/metrics") || return 1
  awk '$1 == "tide_loops_total" && $2 >= 1 {f = 1} END {exit !f}' <<<"$m"
}
soak_start() {
  if [ -n "${1:-}" ]; then
    TIDE_FAULT=$1 "$TIDE" run -c "$LAB/tide.yaml" >> "$LAB/log/tide.log" 2>&1 &
  else
    "$TIDE" run -c "$LAB/tide.yaml" >> "$LAB/log/tide.log" 2>&1 &
  fi
  TIDE_PID=$!
  started "$TIDE_PID" tide
  wait_for 30 "first_loop || ! alive $TIDE_PID" ||
    { bad "tide finished no loop within 30 s of its start"; tail -20 "$LAB/log/tide.log"; exit 1; }
}
# The nodes' and jobs' states as Slurm has them, each change with its time
# (soak/watch.log; the evidence when a check fails).
watch_slurm() {
  local prev="" cur
  while :; do
    cur="$(scontrol -o show node 2>/dev/null | sed -n 's/^NodeName=\([^ ]*\).* State=\([^ ]*\).*/\1=\2/p' | tr '\n' ' ')| $(squeue -h -o '%i:%T:%N' 2>/dev/null | tr '\n' ' ')"
    [ "$cur" != "$prev" ] && echo "$(date -u +%FT%T.%3N) $cur"
    prev=$cur
    sleep 1
  done
}
watch_slurm >> "$S/watch.log" 2>&1 &
WATCH_PID=$!
started "$WATCH_PID" watch
note "crash soak: SOAK_SEED=$SOAK_SEED SOAK_TRIALS=$SOAK_TRIALS (replay: SOAK_SEED=$SOAK_SEED SOAK_TRIALS=$SOAK_TRIALS TIDE=... bash $0)"
KILLS=0
FAULT_KILLS=0
INTERRUPTS=0
T_START=$(date +%s)
soak_start
for TRIAL in $(seq 1 "$SOAK_TRIALS"); do
  soak_draw
  if [ "$kill_mode" = 5 ]; then
    # The worst moment: a fresh tide that SIGKILLs itself right after the
    # provider's create returned, before the store recorded the instance.
    tide_stop
    soak_start kill-after-create
  fi
  backlog=$(squeue -h -t PD | wc -l)
  soak_trial "$LAB/log/tide.log" "$backlog"
done

# ---- the end: everything drains ----
note "all trials done; waiting for the work to drain"
wait_for 240 '[ "$(squeue -h | wc -l)" = 0 ]' && ok "every job left the queue" ||
  note "jobs still queued: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
wait_for 60 '[ -z "$(ls "$LAB/provider/instances" 2>/dev/null)" ]' && ok "every instance given back" ||
  note "instances left: $(ls "$LAB/provider/instances" | tr '\n' ' ')"
wait_for 60 '[ "$(sinfo -h -N -p gpu -o %T | sort -u | tr -d "\n")" = "drained~" ]' || true
tide_stop
kill "$WATCH_PID" 2>/dev/null || true
check "at the end" final
T_END=$(date +%s)
# SOAK_OUT=DIR keeps what the soak leaves (the lab itself goes when it passes).
if [ -n "${SOAK_OUT:-}" ]; then
  mkdir -p "$SOAK_OUT"
  cp -r "$LAB/log" "$S" "$LAB/state.db" "$LAB/tide.yaml" "$SOAK_OUT/"
  cp "$LAB/provider/terminated.log" "$SOAK_OUT/" 2>/dev/null || true
fi

# ---- what happened, and the table ----
q() { sqlite3 "$LAB/state.db" "$1" 2>/dev/null || echo "?"; }
total_jobs=$(wc -l < "$S/jobs")
note "coverage: jobs submitted $total_jobs ($(cut -d' ' -f2 "$S/jobs" | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}' | sed 's/, $//'));" \
  "nodes bought $(q "select count(*) from instances")," \
  "released $(q "select count(*) from instances where state = 'deleted'")," \
  "lost at the provider $(q "select count(*) from instances where state = 'lost'");" \
  "spot interruptions injected $INTERRUPTS, counted by tide $(q "select coalesce(max(value), 0) from counters where name = 'spot_interruptions'");" \
  "checkpoint signals $(grep -c 'sent [A-Z0-9]* to job' "$LAB/log/tide.log" || true)" \
  "(preempt $(grep -c '(preempt;' "$LAB/log/tide.log" || true), evacuate $(grep -c '(evacuate;' "$LAB/log/tide.log" || true))," \
  "requeues by tide $(q "select count(*) from job_events where kind = 'requeued'")," \
  "restarts seen outside tide $(q "select count(*) from job_events where kind = 'interrupted'")," \
  "jobs whose own log shows a signal $(cat "$LAB"/jobs/*.log 2>/dev/null | grep -c '^checkpoint signal$' || true) USR1, $(cat "$LAB"/jobs/*.log 2>/dev/null | grep -c '^term$' || true) TERM," \
  "protected stops refused $(grep -c 'refused: .*protected' "$LAB/log/tide.log" || true);" \
  "recovery: $(grep -c 'recovered: the create .* reached' "$LAB/log/tide.log" || true) creates adopted," \
  "$(grep -c 'recovered: the create .* never reached' "$LAB/log/tide.log" || true) abandoned," \
  "$(grep -c 'recovered: finished the delete' "$LAB/log/tide.log" || true) deletes finished," \
  "$(grep -c 'adopted instance' "$LAB/log/tide.log" || true) instances adopted;" \
  "sacct -c records: $(cut -d'|' -f2 "$S/sacct" 2>/dev/null | sort | uniq -c | awk '{printf "%s %s, ", $1, $2}' | sed 's/, $//')"
note "ledger: $LAST_TOTALS"
soak_report "$KILLS" "$FAULT_KILLS" "$(( T_END - T_START ))" "jobs=$total_jobs interruptions=$INTERRUPTS"
