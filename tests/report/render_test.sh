#!/usr/bin/env bash
# Acceptance test of `tide simulate --html`: the bundled example's report,
# opened in headless Chromium, draws every chart, shows the JSON summary's
# numbers in its headline table, logs no error, throws nothing and fetches
# nothing; in the light and in the dark colour scheme. Negative controls
# (broken copies of the report) prove that the checker can fail.
#
#   TIDE=build/tide [REPORT_OUT=dir] [CHROMIUM=path] tests/report/render_test.sh
#
# Artefacts in $REPORT_OUT (default: a new temporary directory): report.html,
# summary.json, report.png, report-dark.png, dom.html (the rendered DOM),
# chromium-*.log (Chromium's own stderr), control-*.html and their outputs.
# Exit 77 (skipped) when Chromium or python3 is not installed.
#
# The checks themselves and why the console-error detection is reliable:
# tests/report/check_report.py.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TIDE=${TIDE:?set TIDE to the tide binary}
case $TIDE in /*) ;; *) TIDE=$PWD/$TIDE ;; esac
if [ -z "${CHROMIUM:-}" ]; then
  for c in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$c" >/dev/null 2>&1; then CHROMIUM=$(command -v "$c"); break; fi
  done
fi
if [ -z "${CHROMIUM:-}" ] || [ ! -x "$CHROMIUM" ]; then
  echo "SKIP: no Chromium found (chromium, chromium-browser, google-chrome; or set CHROMIUM=path)"
  exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: python3 is not installed (the checker is a python3 script, standard library only)"
  exit 77
fi

OUT=${REPORT_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/tide-report-test.XXXXXX")}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

FAIL=0
T0=$(date +%s%N)
now() { local d=$((($(date +%s%N) - T0) / 100000000)); echo "$((d / 10)).$((d % 10))"; }
ok() { echo "[$(now)s] PASS $*"; }
bad() { FAIL=$((FAIL + 1)); echo "[$(now)s] FAIL $*"; }

echo "chromium: $CHROMIUM ($("$CHROMIUM" --version 2>/dev/null | head -1))"
echo "artefacts: $OUT"

# 1. The bundled example, as the README runs it, with both outputs.
cd "$ROOT"
if ! "$TIDE" simulate -c examples/cluster.yaml -t examples/week.csv \
    --json "$OUT/summary.json" --html "$OUT/report.html" -q >"$OUT/simulate.log" 2>&1; then
  cat "$OUT/simulate.log"
  bad "tide simulate --json --html failed"
  exit 1
fi
ok "tide simulate wrote report.html ($(wc -c <"$OUT/report.html") bytes) and summary.json"

# The broken copies for the negative controls (step 5), made now so that one
# Chromium checks the report and all of them.
CONTROLS=()
while IFS= read -r line; do CONTROLS+=("$line"); done < <(python3 "$HERE/make_controls.py" "$OUT/report.html" "$OUT")
[ ${#CONTROLS[@]} -gt 0 ] || { bad "make_controls.py made no negative control"; exit 1; }

# check SCHEME CASE...: one Chromium, each case in a fresh tab and browser
# context; each case's lines in $OUT/SCHEME/NAME.out. Returns the checker's exit.
check() {
  local scheme=$1
  shift
  rm -rf "${OUT:?}/$scheme"
  set +e
  python3 "$HERE/check_report.py" --chromium "$CHROMIUM" --summary "$OUT/summary.json" --scheme "$scheme" \
    --out-dir "$OUT/$scheme" --browser-log "$OUT/chromium-$scheme.log" "$@" >"$OUT/check-$scheme.log" 2>&1
  local rc=$?
  set -e
  return $rc
}
result() {  # result SCHEME NAME: "passed", "FAILED (N)" or "missing"
  local r
  r=$(sed -n "s/^RESULT $2 \(passed\|FAILED ([0-9]*)\).*/\1/p" "$OUT/$1/$2.out" 2>/dev/null)
  echo "${r:-missing}"
}

# 2-4. The report in both colour schemes, every check and a screenshot in each;
# the light run also checks the negative controls.
files=()
for c in "${CONTROLS[@]}"; do files+=("$(cut -f2 <<<"$c")"); done
# The two Chromiums run side by side (they spend much of their time waiting).
check light "$OUT/report.html,screenshot=$OUT/report.png,dom=$OUT/dom.html" "${files[@]}" &
light_pid=$!
check dark "$OUT/report.html,screenshot=$OUT/report-dark.png,dom=$OUT/dom-dark.html" &
dark_pid=$!
rc=0
wait $light_pid || rc=$?
wait $dark_pid || { r=$?; [ $r -le $rc ] || rc=$r; }
for scheme in light dark; do
  png=$OUT/report.png
  [ "$scheme" = dark ] && png=$OUT/report-dark.png
  r=$(result "$scheme" report)
  if [ "$r" = missing ]; then sed 's/^/    /' "$OUT/check-$scheme.log"; else sed 's/^/    /' "$OUT/$scheme/report.out"; fi
  if [ "$r" = passed ]; then
    ok "report, $scheme scheme: all checks passed; screenshot $png"
  else
    bad "report, $scheme scheme: $r (the lines starting FAIL above; Chromium's own log: $OUT/chromium-$scheme.log)"
  fi
done

# 5. Negative controls: the checker must fail each broken copy, and say why.
for c in "${CONTROLS[@]}"; do
  IFS=$'\t' read -r -a f <<<"$c"
  name=${f[0]}
  out=$OUT/light/control-$name.out
  r=$(result light "control-$name")
  missing=()
  for t in "${f[@]:2}"; do grep -qF -- "$t" "$out" 2>/dev/null || missing+=("$t"); done
  if [ "${r%% *}" = FAILED ] && [ ${#missing[@]} = 0 ]; then
    ok "negative control '$name': the checker fails it, as it must: $(grep -m1 -F -- "${f[2]}" "$out")"
  else
    sed 's/^/    /' "$out" 2>/dev/null || sed 's/^/    /' "$OUT/check-light.log"
    bad "negative control '$name' (${f[1]}): $r, want FAILED; not in the checker's output: ${missing[*]:-(all there)}"
  fi
done
if [ $rc -gt 1 ]; then bad "the checker could not run (exit $rc): $(tail -3 "$OUT/check-light.log" "$OUT/check-dark.log")"; fi

echo "screenshots: $OUT/report.png $OUT/report-dark.png"
if [ $FAIL != 0 ]; then
  echo "[$(now)s] report_render: $FAIL failure(s)"
  exit 1
fi
echo "[$(now)s] report_render: passed"
