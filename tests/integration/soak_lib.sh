# What the crash soaks share (tests/integration/soak.sh on Slurm,
# tests/integration/k8s/soak.sh on Kubernetes): the seeded generator, the
# count of violations per invariant, and the closing table. Sourced after
# the test bed's own lib.sh, whose ok, bad and note it uses.
SOAK_TRIALS=${SOAK_TRIALS:-10}
SOAK_SEED=${SOAK_SEED:-35003}
SOAK_CHECK="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/soak_check.pl"

# ---- a seeded generator (an LCG in shell arithmetic: no subshell draws) ----
RNG=$SOAK_SEED
rnd() { RNG=$(( (RNG * 1103515245 + 12345) % 2147483648 )); R=$(( (RNG >> 8) % $1 )); }  # R in [0, $1)
between() { rnd $(( $2 - $1 + 1 )); R=$(( $1 + R )); }                                   # R in [$1, $2]
ms() { echo $(( $(date +%s%N) / 1000000 )); }
tenths() { echo "$(( $1 / 1000 )).$(( $1 % 1000 / 100 ))"; }                              # ms as s.t

# ---- violations: counted once per invariant and key ----
INVARIANTS="bought_twice leaked jobs ledger protected"
declare -A VCOUNT SEEN
for inv in $INVARIANTS; do VCOUNT[$inv]=0; done
# record FILE WHEN: reads the lines "VIOLATION INV KEY DETAIL" of FILE.
record() {
  local inv key detail
  while read -r _ inv key detail; do
    [ -n "${SEEN[$inv:$key]:-}" ] && continue
    SEEN[$inv:$key]=1
    VCOUNT[$inv]=$(( VCOUNT[$inv] + 1 ))
    bad "[$inv] $2: $detail"
  done < <(grep '^VIOLATION ' "$1" || true)
}

# soak_report KILLS FAULT_KILLS SECONDS KEY=VALUE...: the table, the
# machine-readable line, and the verdict.
soak_report() {
  local kills=$1 fault_kills=$2 seconds=$3 inv total=0
  shift 3
  echo
  echo "crash soak: seed $SOAK_SEED, $SOAK_TRIALS trials, $kills kills by SIGKILL ($fault_kills of them tide's own at a create), $seconds s"
  printf '  %-14s %s\n' invariant violations
  for inv in $INVARIANTS; do
    printf '  %-14s %d\n' "$inv" "${VCOUNT[$inv]}"
    total=$(( total + VCOUNT[$inv] ))
  done
  echo "SOAK_RESULT seed=$SOAK_SEED trials=$SOAK_TRIALS kills=$kills fault_kills=$fault_kills seconds=$seconds $*$(for inv in $INVARIANTS; do printf ' %s=%d' "$inv" "${VCOUNT[$inv]}"; done)"
  if [ "$total" = 0 ]; then
    ok "no invariant violated in $SOAK_TRIALS trials and $kills kills"
  else
    bad "$total violation(s) in $SOAK_TRIALS trials"
  fi
}

# ---- one trial's draws, its events and its kill ----
# soak_draw: every draw of a trial, made here in a fixed order whatever
# happens later, so that a seed replays the same trials.
soak_draw() {
  rnd 10; phase=$R                            # 0-3 busy, 4-6 light, 7-9 quiet (nodes go idle)
  rnd 6; kill_mode=$R                         # 0-2: after a delay; 3-4: just after an action of tide's;
                                              # 5: at its next create (TIDE_FAULT=kill-after-create)
  between 1000 20000; kill_at=$R              # ms into the trial
  between 0 1500; jitter=$R                   # ms after the action (kill_mode 3-4)
  between 2 4; n_short=$R
  short=()
  local k
  for k in 1 2 3 4; do between 1 4; g=$R; between 4 12; short+=("$g $R"); done  # GPUS SECONDS
  rnd 2; long=$R; between 10 25; long_s=$R
  rnd 6; pressure=$R                          # 0: three more long jobs, to fill the pools
  rnd 2; prot=$R; between 2 8; prot_g=$R; between 10 30; prot_s=$R
  rnd 2; high=$R; between 1000 15000; high_at=$R; between 4 10; high_s=$R
  rnd 2; intr=$R; between 0 22000; intr_at=$R; between 6 15; intr_n=$R; rnd 2; intr_pick=$R
  between 0 3000; down=$R                     # ms tide stays down
  PHASE_NAME=$([ "$phase" -le 3 ] && echo busy || { [ "$phase" -le 6 ] && echo light || echo quiet; })
}

# soak_until_kill: from the trial's start (t0, log_from), the timed events
# (the hooks soak_high and soak_interrupt PICK NOTICE) until tide is killed,
# by the script after the drawn delay or just after one of its actions
# (the hook acted_since BYTE), or by itself at a create (kill_mode 5, started
# under the fault). Sets el (ms into the trial) and how; counts KILLS and
# FAULT_KILLS. The events not yet due stay in ev_high and ev_intr.
soak_until_kill() {
  local kill_due rc
  ev_high=$([ "$high" = 1 ] && echo "$high_at" || echo -1)
  ev_intr=$([ "$intr" = 1 ] && echo "$intr_at" || echo -1)
  case $kill_mode in
    0|1|2) kill_due=$kill_at how="random delay" ;;
    3|4) kill_due=25000 how="after an action" ;;
    5) kill_due=25000 how="at a create, by itself (TIDE_FAULT=kill-after-create)" ;;
  esac
  while :; do
    el=$(( $(ms) - t0 ))
    if [ "$ev_high" -ge 0 ] && [ "$el" -ge "$ev_high" ]; then soak_high; ev_high=-1; fi
    if [ "$ev_intr" -ge 0 ] && [ "$el" -ge "$ev_intr" ]; then soak_interrupt "$intr_pick" "$intr_n"; ev_intr=-1; fi
    if [ "$kill_mode" = 3 ] || [ "$kill_mode" = 4 ]; then
      if [ "$kill_due" = 25000 ] && acted_since "$log_from"; then kill_due=$(( el + jitter )); fi
    fi
    if [ "$el" -ge "$kill_due" ]; then break; fi
    if [ "$kill_mode" = 5 ] && ! alive "$TIDE_PID"; then break; fi
    sleep 0.1
  done
  if [ "$kill_mode" = 5 ] && ! alive "$TIDE_PID"; then
    rc=0; { wait "$TIDE_PID"; } 2>/dev/null || rc=$?
    if [ "$rc" = 137 ]; then FAULT_KILLS=$((FAULT_KILLS + 1)); else bad "trial $TRIAL: tide exited $rc, not by its fault's SIGKILL"; fi
  else
    if [ "$kill_mode" = 5 ]; then how="after 25 s without a create"; fi
    kill -KILL "$TIDE_PID" 2>/dev/null || true
    { wait "$TIDE_PID"; } 2>/dev/null || true
  fi
  KILLS=$((KILLS + 1))
}

# soak_downtime: while tide is down, the events not yet due, then the pause.
soak_downtime() {
  if [ "$ev_high" -ge 0 ]; then soak_high; fi
  if [ "$ev_intr" -ge 0 ]; then soak_interrupt "$intr_pick" "$intr_n"; fi
  sleep "$(tenths "$down")"
}

# soak_submit BACKLOG: the trial's jobs through the hook soak_job KIND GPUS
# SECONDS (KIND short, long or protected); with 4 or more jobs waiting
# already (BACKLOG) only the protected one: the soak is about crashes, not
# overload.
soak_submit() {
  local k
  if [ "$1" -lt 4 ]; then
    if [ "$phase" -le 3 ]; then
      for k in $(seq 0 $((n_short - 1))); do set -- ${short[$k]}; soak_job short "$1" "$2"; done
      if [ "$long" = 1 ]; then soak_job long 8 "$long_s"; fi
      if [ "$pressure" = 0 ]; then for k in 1 2 3; do soak_job long 8 "$long_s"; done; fi
    elif [ "$phase" -le 6 ]; then
      set -- ${short[0]}; soak_job short "$1" "$2"
    fi
  fi
  if [ "$prot" = 1 ]; then soak_job protected "$prot_g" "$prot_s"; fi
}

# soak_trial LOG BACKLOG: one trial after its draws, with tide running and
# logging to LOG: the jobs, the events and the kill, the checks on the killed
# state, the time down, the restart (the hook soak_start) and the checks once
# it has reconciled (the hook check WHEN kill|post [SINCE]).
soak_trial() {
  local log=$1 backlog=$2 what since restart_from recovered
  SUBMITTED=""; INJECTED=""
  t0=$(ms)
  log_from=$(stat -c %s "$log")
  soak_submit "$backlog"
  soak_until_kill
  what=$(tail -c +"$((log_from + 1))" "$log" | grep -vE '^\S+ tide: (plan|note):' | tail -1 | cut -c22-180 || true)
  note "trial $TRIAL: SIGKILL at $(tenths "$el") s ($how); phase $PHASE_NAME, jobs:${SUBMITTED:- none}$([ "$backlog" -ge 4 ] && echo " (backlog $backlog)");" \
    "interruptions:${INJECTED:- none}; tide's last line: ${what:-none}"
  check "trial $TRIAL, killed" kill
  SUBMITTED=""; INJECTED=""
  soak_downtime
  since=$(date +%s)
  restart_from=$(stat -c %s "$log")
  soak_start
  check "trial $TRIAL, restarted" post "$since"
  recovered=$(tail -c +"$((restart_from + 1))" "$log" | grep -E 'recovered:|adopted instance|gone at the provider' | cut -c28- | tr '\n' ';' || true)
  note "trial $TRIAL: restarted after $(tenths "$down") s down${SUBMITTED:+ (submitted meanwhile:$SUBMITTED)}${INJECTED:+ (injected meanwhile:$INJECTED)};" \
    "${recovered:+recovery: $recovered }$LAST_TOTALS"
}
