# Shared harness for tide's integration tests: a real Slurm 22.05 cluster on
# this machine (one slurmctld; "cloud" nodes whose slurmd tide's local
# provider starts), tide itself, and optionally Prometheus and a fake DCGM
# exporter. Everything listens on 127.0.0.1. Every process started here is
# recorded by PID and stopped by PID in lab_stop (an EXIT trap), and the test
# fails if anything of this lab is still alive afterwards.
#
# Facts behind the configuration: ../shared/notes/slurm-on-one-host.md and
# docs/live.md (the node life cycle tide drives).
#
# Usage in a test:  . "$(dirname "$0")/lib.sh"; lab_init NAME PORT_BASE; lab_start; ...
set -euo pipefail

TIDE=${TIDE:?set TIDE to the tide binary}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PASS=0
FAIL=0
T0=$(date +%s.%N)

now() { printf '%.1f' "$(echo "$(date +%s.%N) - $T0" | bc)"; }
ok() { PASS=$((PASS + 1)); echo "[$(now)s] PASS $*"; }
bad() { FAIL=$((FAIL + 1)); echo "[$(now)s] FAIL $*"; }
note() { echo "[$(now)s] $*"; }

# wait_for SECONDS 'shell condition': polls every 0.2 s.
wait_for() {
  local -
  set +o pipefail
  local end=$(( $(date +%s) + $1 ))
  while [ "$(date +%s)" -le "$end" ]; do
    if eval "$2" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  return 1
}

require() {
  for p in "$@"; do
    if ! command -v "$p" >/dev/null 2>&1 && [ ! -x "$p" ]; then
      echo "SKIP: $p is not installed (scripts/deps installs it)"; exit 77
    fi
  done
}

# lab_init NAME PORT_BASE: a fresh lab directory; ports PORT_BASE..+9.
lab_init() {
  if [ "$(id -u)" != 0 ]; then echo "SKIP: the Slurm lab needs root (mknod, slurmd as root)"; exit 77; fi
  require /usr/sbin/slurmctld /usr/sbin/slurmd scontrol squeue sinfo sbatch bc curl perl
  LAB_NAME=$1
  PORT=$2
  LAB=$(mktemp -d "${TMPDIR:-/tmp}/tide-it-$1.XXXXXX")
  export SLURM_CONF=$LAB/etc/slurm.conf
  mkdir -p "$LAB"/{etc,state,spool,log,run,fakedev,jobs,provider}
  PIDS_FILE=$LAB/run/started.pids
  : > "$PIDS_FILE"
  trap lab_stop EXIT
  "$ROOT/scripts/slurm-lab" conf "$LAB" "$PORT"
  echo "test-token-$$" > "$LAB/etc/token"
  chmod 600 "$LAB/etc/token"
  TOKEN=$(cat "$LAB/etc/token")
  HTTP_PORT=$((PORT + 5))
}

# tide's configuration for the lab; extra YAML for `policies.tide` in $1,
# extra `live:` keys in $2.
write_tide_config() {
  # The tests count the nodes tide buys: no spare nodes against slow boots
  # (tide's default is 3) unless a test asks for them (hedge.sh).
  local hedge="    boot_hedge: 0"
  [[ "${1:-}" == *boot_hedge* ]] && hedge=""
  cat > "$LAB/tide.yaml" <<YAML
currency: USD
pools:
  - {name: ondemand, instance_type: {name: a100x8, gpus: 8}, price_per_hour: 32, min_nodes: 0, max_nodes: 2, boot_delay: 3s}
  - {name: spot, instance_type: {name: a100x8, gpus: 8}, tier: spot, price_per_hour: 10, min_nodes: 0, max_nodes: 2, boot_delay: 3s, priority: 10}
priority_classes:
  - {name: high, value: 100}
  - {name: normal, value: 50}
  - {name: low, value: 10, preemptible: true}
policies:
  tide:
    scan_interval: 2s
    idle_release_after: 15s
$hedge
${1:-}
live:
  state: state.db
  loop_interval: 2s
  jobs:
    classes: [{partition: high, class: high}]
    checkpoint_grace: 8s
  slurm:
    conf: etc/slurm.conf
    pools: {ondemand: "gpu[1-2]", spot: "gpu[3-4]"}
  provider: {kind: local, state_dir: provider}
  http: {port: $HTTP_PORT, token_file: etc/token}
${2:-}
YAML
}

started() { echo "$1 $2" >> "$PIDS_FILE"; }  # PID WHAT

lab_start() {
  /usr/sbin/slurmctld -f "$SLURM_CONF" -i
  wait_for 20 'scontrol ping | grep -q UP' || { bad "slurmctld did not answer"; exit 1; }
  started "$(cat "$LAB/run/slurmctld.pid")" slurmctld
  # Nodes tide has not bought stay drained, so Slurm never resumes one itself.
  scontrol update nodename=gpu[1-4] state=drain reason="tide: not provisioned"
  note "slurmctld up (port $PORT), 4 cloud nodes drained and powered down"
}

tide_start() {  # extra args
  "$TIDE" run -c "$LAB/tide.yaml" "$@" >> "$LAB/log/tide.log" 2>&1 &
  TIDE_PID=$!
  started "$TIDE_PID" tide
  wait_for 20 "curl -sf http://127.0.0.1:$HTTP_PORT/healthz" || { bad "tide /healthz never answered"; tail -20 "$LAB/log/tide.log"; exit 1; }
}

tide_stop() {  # SIGTERM, wait for exit
  kill -TERM "$TIDE_PID" 2>/dev/null || true
  wait_for 30 "! kill -0 $TIDE_PID" || kill -KILL "$TIDE_PID" 2>/dev/null || true
  wait "$TIDE_PID" 2>/dev/null || true
}

jstate() { squeue -h -j "$1" -o %T 2>/dev/null | head -1; }
nstate() { sinfo -h -N -n "$1" -o %T 2>/dev/null | head -1; }
tide_log() { cat "$LAB/log/tide.log"; }

# A batch job that logs its checkpoint signal: jobscript NAME SECONDS
jobscript() {
  cat > "$LAB/jobs/$1.sh" <<JOB
#!/bin/bash
log=$LAB/jobs/$1-\$SLURM_JOB_ID.log
echo "start restart=\${SLURM_RESTART_COUNT:-0} node=\$SLURMD_NODENAME" >> \$log
trap 'echo "checkpoint signal" >> \$log' USR1
trap 'echo "term" >> \$log; exit 143' TERM
for i in \$(seq 1 $2); do sleep 1; done
echo done >> \$log
JOB
  chmod +x "$LAB/jobs/$1.sh"
}

alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# Every process that belongs to this lab: one we started, a slurmd the
# provider started (its pid file), or anything whose command line or
# environment is a job of this lab's Slurm.
lab_pids() {
  local -
  set +o pipefail  # grep -q may close the pipe early; that is a match, not a failure
  local pids=""
  [ -f "$PIDS_FILE" ] && pids=$(cut -d' ' -f1 "$PIDS_FILE")
  for f in "$LAB"/run/slurmd-*.pid; do [ -s "$f" ] && pids="$pids $(cat "$f")"; done
  for p in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$p" = $$ ] && continue
    if { tr '\0' ' ' < /proc/$p/cmdline; } 2>/dev/null | grep -qF "$LAB/" ||
       { { tr '\0' '\n' < /proc/$p/environ; } 2>/dev/null | grep -qx "SLURM_CONF=$SLURM_CONF" &&
         { tr '\0' '\n' < /proc/$p/environ; } 2>/dev/null | grep -q '^SLURM_JOB_ID='; }; then
      pids="$pids $p"
    fi
  done
  local out=""
  for p in $pids; do alive "$p" && out="$out $p"; done
  echo $out | tr ' ' '\n' | sort -u | tr '\n' ' '
}

lab_stop() {
  local rc=$?
  trap - EXIT
  set +e
  [ -n "${TIDE_PID:-}" ] && kill -TERM "$TIDE_PID" 2>/dev/null
  scancel --full $(squeue -h -o %i 2>/dev/null) >/dev/null 2>&1
  scontrol shutdown >/dev/null 2>&1
  local left=""
  for i in $(seq 1 30); do
    left=$(lab_pids)
    [ -z "${left// /}" ] && break
    [ "$i" = 10 ] && kill -TERM $left 2>/dev/null
    [ "$i" = 20 ] && kill -KILL $left 2>/dev/null
    sleep 0.2
  done
  left=$(lab_pids)
  if [ -n "${left// /}" ]; then
    echo "FAIL processes left behind: $left"; kill -KILL $left 2>/dev/null; rc=1
  fi
  if [ "$rc" != 0 ] || [ "$FAIL" != 0 ]; then
    echo "--- tide log (last 60 lines) ---"; tail -60 "$LAB/log/tide.log" 2>/dev/null
    echo "--- slurmctld log (last 20 lines) ---"; tail -20 "$LAB/log/slurmctld.log" 2>/dev/null
    echo "lab kept for inspection: $LAB"
  else
    rm -rf "$LAB"
  fi
  echo "$PASS passed, $FAIL failed"
  [ "$FAIL" = 0 ] && exit "$rc" || exit 1
}
