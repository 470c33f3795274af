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
require sqlite3
SOAK_TRIALS=${SOAK_TRIALS:-10}
SOAK_SEED=${SOAK_SEED:-35003}
CHECK="$ROOT/tests/integration/soak_check.pl"
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

# ---- a seeded generator (an LCG in shell arithmetic: no subshell draws) ----
RNG=$SOAK_SEED
rnd() { RNG=$(( (RNG * 1103515245 + 12345) % 2147483648 )); R=$(( (RNG >> 8) % $1 )); }  # R in [0, $1)
between() { rnd $(( $2 - $1 + 1 )); R=$(( $1 + R )); }                                   # R in [$1, $2]
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# ---- violations: counted once per invariant and key ----
INVARIANTS="bought_twice leaked jobs ledger protected"
declare -A VCOUNT SEEN
for inv in $INVARIANTS; do VCOUNT[$inv]=0; done
# record FILE WHEN: reads "VIOLATION INV KEY DETAIL" lines
record() {
  local inv key detail
  while read -r _ inv key detail; do
    [ -n "${SEEN[$inv:$key]:-}" ] && continue
    SEEN[$inv:$key]=1
    VCOUNT[$inv]=$(( VCOUNT[$inv] + 1 ))
    bad "[$inv] $2: $detail"
  done < <(grep '^VIOLATION ' "$1" || true)
}

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
interrupt() {  # PICK NOTICE: the PICK-th spot node that has an instance now
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
  perl "$CHECK" --db "$LAB/state.db" --local-provider "$LAB/provider" --prices "$PRICES" \
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
  # The draws, all made here in a fixed order, whatever happens later.
  rnd 10; phase=$R                            # 0-3 busy, 4-6 light, 7-9 quiet (nodes go idle)
  rnd 6; kill_mode=$R                         # 0-2: after a delay; 3-4: just after an action of tide's;
                                              # 5: at its next create (TIDE_FAULT=kill-after-create)
  between 1000 20000; kill_at=$R              # ms into the trial
  between 0 1500; jitter=$R                   # ms after the action (kill_mode 3-4)
  between 2 4; n_short=$R
  short=()
  for k in 1 2 3 4; do between 1 4; g=$R; between 4 12; short+=("$g $R"); done
  rnd 2; long=$R; between 10 25; long_s=$R
  rnd 6; pressure=$R                          # 0: three more long jobs, to fill the pools
  rnd 2; prot=$R; between 2 8; prot_g=$R; between 10 30; prot_s=$R
  rnd 2; high=$R; between 1000 15000; high_at=$R; between 4 10; high_s=$R
  rnd 2; intr=$R; between 0 22000; intr_at=$R; between 6 15; intr_n=$R; rnd 2; intr_pick=$R
  between 0 3000; down=$R
  if [ "$kill_mode" = 5 ]; then
    # The worst moment: a fresh tide that SIGKILLs itself right after the
    # provider's create returned, before the store recorded the instance.
    tide_stop
    soak_start kill-after-create
  fi
  # A backlog is not added to: the soak is about crashes, not overload.
  backlog=$(squeue -h -t PD | wc -l)
  SUBMITTED=""; INJECTED=""
  t0=$(ms)
  log_from=$(stat -c %s "$LAB/log/tide.log")
  if [ "$backlog" -lt 4 ]; then
    if [ "$phase" -le 3 ]; then
      for k in $(seq 0 $((n_short - 1))); do set -- ${short[$k]}; submit short gpu "$1" "$2"; done
      [ "$long" = 1 ] && submit long gpu 8 "$long_s"
      if [ "$pressure" = 0 ]; then for k in 1 2 3; do submit long gpu 8 "$long_s"; done; fi
    elif [ "$phase" -le 6 ]; then
      set -- ${short[0]}; submit short gpu "$1" "$2"
    fi
  fi
  [ "$prot" = 1 ] && submit protected od "$prot_g" "$prot_s" --comment tide:protected
  # Timed events: the high-priority job and the spot interruption.
  ev_high=$([ "$high" = 1 ] && echo "$high_at" || echo -1)
  ev_intr=$([ "$intr" = 1 ] && echo "$intr_at" || echo -1)
  case $kill_mode in 0|1|2) kill_due=$kill_at how="random delay" ;; 3|4) kill_due=25000 how="after an action" ;;
                     5) kill_due=25000 how="at a create, by itself (TIDE_FAULT=kill-after-create)" ;; esac
  while :; do
    el=$(( $(ms) - t0 ))
    if [ "$ev_high" -ge 0 ] && [ "$el" -ge "$ev_high" ]; then submit high high 8 "$high_s"; ev_high=-1; fi
    if [ "$ev_intr" -ge 0 ] && [ "$el" -ge "$ev_intr" ]; then interrupt "$intr_pick" "$intr_n"; ev_intr=-1; fi
    if [ "$kill_mode" = 3 ] || [ "$kill_mode" = 4 ]; then
      if [ "$kill_due" = 25000 ] && acted_since "$log_from"; then kill_due=$(( el + jitter )); fi
    fi
    [ "$el" -ge "$kill_due" ] && break
    if [ "$kill_mode" = 5 ] && ! alive "$TIDE_PID"; then break; fi
    sleep 0.1
  done
  if [ "$kill_mode" = 5 ] && ! alive "$TIDE_PID"; then
    rc=0; { wait "$TIDE_PID"; } 2>/dev/null || rc=$?
    if [ "$rc" = 137 ]; then FAULT_KILLS=$((FAULT_KILLS + 1)); else bad "trial $TRIAL: tide exited $rc, not by its fault's SIGKILL"; fi
  else
    [ "$kill_mode" = 5 ] && how="after 25 s without a create"
    kill -KILL "$TIDE_PID" 2>/dev/null || true
    { wait "$TIDE_PID"; } 2>/dev/null || true
  fi
  KILLS=$((KILLS + 1))
  what=$(tail -c +"$((log_from + 1))" "$LAB/log/tide.log" | grep -vE '^\S+ tide: (plan|note):' | tail -1 | cut -c22-180 || true)
  note "trial $TRIAL: SIGKILL at $(( el / 1000 )).$(( el % 1000 / 100 )) s ($how); phase $([ "$phase" -le 3 ] && echo busy || { [ "$phase" -le 6 ] && echo light || echo quiet; })," \
    "jobs:${SUBMITTED:- none}$([ "$backlog" -ge 4 ] && echo " (backlog $backlog)"); interruptions:${INJECTED:- none}; tide's last line: ${what:-none}"
  check "trial $TRIAL, killed" kill
  # While tide is down: the events not yet due, then a random pause.
  SUBMITTED=""; INJECTED=""
  [ "$ev_high" -ge 0 ] && submit high high 8 "$high_s"
  [ "$ev_intr" -ge 0 ] && interrupt "$intr_pick" "$intr_n"
  sleep "$(( down / 1000 )).$(( down % 1000 / 100 ))"
  since=$(date +%s)
  restart_from=$(stat -c %s "$LAB/log/tide.log")
  soak_start
  check "trial $TRIAL, restarted" post "$since"
  recovered=$(tail -c +"$((restart_from + 1))" "$LAB/log/tide.log" | grep -E 'recovered:|adopted instance|gone at the provider' | cut -c28- | tr '\n' ';' || true)
  note "trial $TRIAL: restarted after $(( down / 1000 )).$(( down % 1000 / 100 )) s down${SUBMITTED:+ (submitted meanwhile:$SUBMITTED)}${INJECTED:+ (injected meanwhile:$INJECTED)}; ${recovered:+recovery: $recovered }$LAST_TOTALS"
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
echo
echo "crash soak: seed $SOAK_SEED, $SOAK_TRIALS trials, $KILLS kills by SIGKILL ($FAULT_KILLS of them tide's own at a create), $(( T_END - T_START )) s"
printf '  %-14s %s\n' invariant violations
total_v=0
for inv in $INVARIANTS; do
  printf '  %-14s %d\n' "$inv" "${VCOUNT[$inv]}"
  total_v=$(( total_v + VCOUNT[$inv] ))
done
echo "SOAK_RESULT seed=$SOAK_SEED trials=$SOAK_TRIALS kills=$KILLS fault_kills=$FAULT_KILLS seconds=$(( T_END - T_START )) jobs=$total_jobs interruptions=$INTERRUPTS$(for inv in $INVARIANTS; do printf ' %s=%d' "$inv" "${VCOUNT[$inv]}"; done)"
[ "$total_v" = 0 ] && ok "no invariant violated in $SOAK_TRIALS trials and $KILLS kills" || bad "$total_v violation(s) in $SOAK_TRIALS trials"
