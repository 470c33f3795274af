#!/usr/bin/env bash
# Benchmark (not a test): the HTML report of the largest evaluation trace, ITP
# cluster04 (15,802 jobs over 59.5 days; docs/evaluation.md), with the
# policies its configuration compares. Prints the report's size, how long
# headless Chromium takes to open and draw it (median of RUNS), and how long
# `tide simulate` takes with and without --html (median of SIM_RUNS).
#
#   bench/report_open.sh            # build/release/tide if it has --html, else $TIDE
#   TIDE=build/tide RUNS=5 SIM_RUNS=3 CHROMIUM=/usr/bin/chromium BENCH_OUT=dir bench/report_open.sh
#
# Exit 77 when the trace (../shared/traces) or Chromium is absent.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONFIG=${CONFIG:-$ROOT/examples/evaluation/cluster04.yaml}
TRACE=${TRACE:-$ROOT/../shared/traces/itp-2021/cluster04.csv}
RUNS=${RUNS:-5}
SIM_RUNS=${SIM_RUNS:-3}
OUT=${BENCH_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/tide-report-bench.XXXXXX")}
mkdir -p "$OUT"

if [ ! -f "$TRACE" ]; then
  echo "SKIP: $TRACE is absent (the public traces live in ../shared/traces; see its README.md)"
  exit 77
fi
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$CHROMIUM" ]; then
  echo "SKIP: no Chromium found (set CHROMIUM=path)"
  exit 77
fi

has_html() { [ -x "$1" ] && "$1" simulate --help 2>&1 | grep -q -- '--html'; }
BIN=
if has_html "$ROOT/build/release/tide"; then
  BIN=$ROOT/build/release/tide
elif [ -n "${TIDE:-}" ] && has_html "$TIDE"; then
  [ -x "$ROOT/build/release/tide" ] && echo "note: build/release/tide has no --html (built before it); using \$TIDE"
  BIN=$TIDE
else
  echo "ERROR: no tide with --html: run scripts/build release, or set TIDE=path" >&2
  exit 1
fi
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
BUILD_TYPE=${BUILD_TYPE:-$(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$(dirname "$BIN")/CMakeCache.txt" 2>/dev/null || true)}

cd "$ROOT"
ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { tr ' ' '\n' | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
sim() {  # sim [extra args]: run tide simulate once, print its wall time in ms
  local t0
  t0=$(ms)
  "$BIN" simulate -c "$CONFIG" -t "$TRACE" -q "$@" >"$OUT/simulate.log" 2>&1 || {
    cat "$OUT/simulate.log" >&2
    echo "ERROR: tide simulate $* failed" >&2
    exit 1
  }
  echo $(( $(ms) - t0 ))
}

echo "tide:     $BIN (${BUILD_TYPE:-build type unknown})"
echo "chromium: $CHROMIUM ($("$CHROMIUM" --version 2>/dev/null | head -1))"
echo "config:   ${CONFIG#"$ROOT"/}"
echo "trace:    $TRACE"
echo "machine:  $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# The report (and the JSON summary, for the record).
sim --json "$OUT/summary.json" --html "$OUT/report.html" >/dev/null
bytes=$(wc -c <"$OUT/report.html")
policies=$(python3 -c 'import json, sys; print(", ".join(p["name"] for p in json.load(open(sys.argv[1]))["policies"]))' "$OUT/summary.json")
printf 'report:   %s: %d bytes (%.2f MB), policies %s\n\n' "$OUT/report.html" "$bytes" "$(echo "$bytes / 1000000" | bc -l)" "$policies"

# tide simulate, with and without --html.
without=() with=()
for _ in $(seq "$SIM_RUNS"); do
  without+=("$(sim)")
  with+=("$(sim --html "$OUT/report-again.html")")
done
m_without=$(echo "${without[*]}" | median)
m_with=$(echo "${with[*]}" | median)

# Chromium: open and draw.
python3 "$ROOT/bench/report_open_time.py" --chromium "$CHROMIUM" --runs "$RUNS" "$OUT/report.html" | tee "$OUT/open.txt"
get() { awk -v k="$1" '$1 == k { print $2 " (" $3 "-" $4 ")" }' "$OUT/open.txt"; }

echo
echo "| measure (ms)                                      | median (min-max) |"
echo "|---------------------------------------------------|------------------|"
printf '| tide simulate, without --html (%d runs)            | %s (%s) |\n' "$SIM_RUNS" "$m_without" "${without[*]}"
printf '| tide simulate --html (%d runs)                     | %s (%s) |\n' "$SIM_RUNS" "$m_with" "${with[*]}"
printf '| Chromium: file read (responseEnd) (%d runs)        | %s |\n' "$RUNS" "$(get read)"
printf '| Chromium: HTML parsed (domInteractive)             | %s |\n' "$(get parsed)"
printf '| Chromium: charts drawn (data-rendered)             | %s |\n' "$(get rendered)"
printf '| Chromium: next frame after data-rendered           | %s |\n' "$(get frame)"
printf '| harness wall time, navigate to next frame          | %s |\n' "$(get wall)"
printf '\nreport size: %d bytes (%.2f MB)\n' "$bytes" "$(echo "$bytes / 1000000" | bc -l)"
