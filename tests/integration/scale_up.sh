#!/bin/bash
# Scale-up and release: six GPU jobs (more than the pending threshold of 3)
# on an empty elastic partition get tide's create requests within one loop;
# the jobs run on the nodes tide bought; the idle nodes are released after
# idle_release_after (15 s here) and powered down; the ledger is closed.
. "$(dirname "$0")/lib.sh"
lab_init scale-up "${PORT_BASE:-17100}"
write_tide_config
lab_start
tide_start
jobscript work 12
t_submit=$(date +%s.%N)
for i in 1 2 3 4 5 6; do sbatch -p gpu --gres=gpu:2 -o /dev/null "$LAB/jobs/work.sh" >/dev/null; done
if wait_for 10 'grep -q "bought node" "$LAB/log/tide.log"'; then
  t_req=$(date +%s.%N)
  ok "create request $(printf '%.1f' "$(echo "$t_req - $t_submit" | bc)") s after sbatch (tide's loop: 2 s)"
  note "$(grep -m1 'bought node' "$LAB/log/tide.log")"
else
  bad "no create request within 10 s of sbatch"
fi
# 6 jobs x 2 GPUs = 12 GPUs: two 8-GPU nodes, from the spot pool first (priority 10).
wait_for 10 '[ "$(ls "$LAB/provider/instances" 2>/dev/null | wc -l)" -ge 1 ]' && ok "the local provider holds $(ls "$LAB/provider/instances" | wc -l) instance(s)" || bad "no instance at the provider"
if wait_for 60 '[ "$(squeue -h -t R | wc -l)" -ge 1 ]'; then
  ok "jobs run on bought capacity $(printf '%.1f' "$(echo "$(date +%s.%N) - $t_submit" | bc)") s after sbatch: $(squeue -h -t R -o %N | sort -u | tr '\n' ' ')"
else
  bad "no job started; squeue: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
fi
wait_for 120 '[ "$(squeue -h | wc -l)" = 0 ]' && ok "all six jobs completed" || bad "jobs left: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
bought=$(grep -c "bought node" "$LAB/log/tide.log" || true)
[ "$bought" -le 2 ] && ok "bought $bought nodes for 12 GPUs (no duplicate buys)" || bad "bought $bought nodes for 12 GPUs"
if wait_for 60 'grep -q "released node" "$LAB/log/tide.log" && [ "$(ls "$LAB/provider/instances" 2>/dev/null | wc -l)" = 0 ]'; then
  ok "idle nodes released after the idle time: $(grep -c 'released node' "$LAB/log/tide.log") released, no instance left"
else
  bad "idle nodes not released; instances: $(ls "$LAB/provider/instances" 2>/dev/null | tr '\n' ' ')"
fi
wait_for 30 '[ "$(sinfo -h -N -p gpu -o %T | sort -u | tr -d "\n")" = "drained~" ]' && ok "every node powered down and drained again" || bad "nodes: $(sinfo -h -N -p gpu -o '%N=%T' | tr '\n' ' ')"
cost=$(curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" | grep '^tide_cost_total' | awk '{s+=$2} END {print s+0}')
[ "$(echo "$cost > 0" | bc)" = 1 ] && ok "cost recorded: $cost USD" || bad "no cost in /metrics"
# The live status page and its data: the history shows the demand and the
# nodes bought for it (spot first here, on-demand if spot ran out).
# (Read whole before grep: under pipefail, `curl | grep -q` fails when grep
# stops reading before curl has written everything, as curl then gets EPIPE.)
page=$(curl -sf "http://127.0.0.1:$HTTP_PORT/" || true)
if grep -q 'data-source="/api/v1/report"' <<<"$page"; then
  ok "GET / serves the live status page"
else
  bad "GET / did not serve the live status page"
fi
report=$(curl -sf "http://127.0.0.1:$HTTP_PORT/api/v1/report" || true)
peaks=$(perl -MJSON::PP -e '
  my $r = eval { decode_json(join("", <STDIN>)) } or do { print "unparsable"; exit };
  my $s = $r->{policies}[0]{timeline}{series} or do { print "no timeline"; exit };
  my $max = sub { my $m = 0; for (@{$s->{$_[0]} || []}) { $m = $_ if $_ > $m } $m };
  printf "mode=%s demand=%g capacity=%g", $r->{mode}, $max->("demand_gpus"),
    $max->("capacity_gpus/spot") + $max->("capacity_gpus/on-demand");' <<<"$report")
if [[ "$peaks" =~ ^mode=live\ demand=([0-9.]+)\ capacity=([0-9.]+)$ ]] &&
   [ "$(echo "${BASH_REMATCH[1]} > 0 && ${BASH_REMATCH[2]} > 0" | bc)" = 1 ]; then
  ok "GET /api/v1/report has the timeline: peak demand ${BASH_REMATCH[1]} GPUs, peak capacity ${BASH_REMATCH[2]} GPUs"
else
  bad "GET /api/v1/report: $peaks (${report:0:200})"
fi
# The live page in a real browser (tests/report/check_report.py --live): in
# headless Chromium it draws every chart, its headline equals the JSON it was
# drawn from, it logs no error and fetches nothing but /api/v1/report, which
# it fetches and draws again every loop (2 s here). The screenshot and the
# checker's lines are kept (the lab is removed when the test passes).
if [ -z "${CHROMIUM:-}" ]; then
  for c in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$c" >/dev/null 2>&1; then CHROMIUM=$(command -v "$c"); break; fi
  done
fi
if [ -z "${CHROMIUM:-}" ] || [ ! -x "$CHROMIUM" ] || ! command -v python3 >/dev/null 2>&1; then
  note "SKIP the live page in headless Chromium: no Chromium (chromium, chromium-browser, google-chrome; or CHROMIUM=path) or no python3"
else
  live_out=${LIVE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/tide-it-scale-up-live.XXXXXX")}
  mkdir -p "$live_out"
  rc=0
  python3 "$ROOT/tests/report/check_report.py" --chromium "$CHROMIUM" --browser-log "$live_out/chromium.log" \
    --live "http://127.0.0.1:$HTTP_PORT/,screenshot=$live_out/live.png" >"$live_out/check.log" 2>&1 || rc=$?
  if [ $rc = 0 ] && grep -q '^RESULT live passed' "$live_out/check.log"; then
    ok "the live page in headless Chromium: $(sed -n 's/^ok   \([0-9]* of [0-9]* charts drawn\).*/\1/p' "$live_out/check.log"), headline = the JSON it drew, no console error, no other request; $(sed -n 's/^ok   refresh: \(.*\) of the navigation (at \(.*\))$/\1 (at \2)/p' "$live_out/check.log")"
  else
    sed 's/^/    /' "$live_out/check.log"
    bad "the live page in headless Chromium: checker exit $rc (the lines starting FAIL above; Chromium's log: $live_out/chromium.log)"
  fi
  if [ -s "$live_out/live.png" ]; then
    note "live page screenshot: $live_out/live.png (checker output: $live_out/check.log)"
  else
    note "no live page screenshot (checker output: $live_out/check.log)"
  fi
fi
tide_stop
ok "tide stopped on SIGTERM"
