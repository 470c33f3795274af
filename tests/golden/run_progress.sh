#!/usr/bin/env bash
# The progress line of `tide simulate`: on a terminal by default, never in a
# pipe or file unless asked for, and always cleared at the end.
# Usage: TIDE=path/to/tide run_progress.sh SOURCE_DIR OUT_DIR
set -uo pipefail
src=$1 out=$2
rm -rf "$out" && mkdir -p "$out"
args=(simulate -c "$src/examples/cluster.yaml" -t "$src/examples/week.csv")
fail=0

# A file: quiet by default.
"$TIDE" "${args[@]}" >"$out/auto.out" 2>"$out/auto.err" || { echo "auto: tide failed"; fail=1; }
if [ -s "$out/auto.err" ]; then echo "auto: standard error is a file, yet it got: $(head -c 200 "$out/auto.err")"; fail=1; fi

# Asked for: the line, redrawn in place, cleared at the end; stdout keeps the table.
"$TIDE" "${args[@]}" --progress always >"$out/always.out" 2>"$out/always.err" || { echo "always: tide failed"; fail=1; }
err=$(cat -v "$out/always.err")
case "$err" in
  *'^M^[[Ksimulating 5 policies: '*'jobs '*'/1,054 ('*) ;;
  *) echo "always: no progress line on standard error: $err"; fail=1 ;;
esac
case "$err" in
  *'^M^[[K') ;;
  *) echo "always: the line is not cleared at the end: $err"; fail=1 ;;
esac
if ! cmp -s "$out/auto.out" "$out/always.out"; then echo "always: the table on standard output changed"; fail=1; fi

# Never, and --quiet: nothing.
"$TIDE" "${args[@]}" --progress never >/dev/null 2>"$out/never.err"
if [ -s "$out/never.err" ]; then echo "never: got output"; fail=1; fi

# A terminal (a pseudo-terminal from script(1)): shown by default.
if command -v script >/dev/null 2>&1; then
  script -qec "$(printf '%q ' "$TIDE" "${args[@]}") >/dev/null" /dev/null >"$out/tty.txt" 2>&1 </dev/null
  if ! grep -q "simulating 5 policies" "$out/tty.txt"; then
    echo "tty: no progress on a terminal: $(cat -v "$out/tty.txt" | head -c 300)"; fail=1
  fi
else
  echo "tty: script(1) not found; the terminal case is not checked"
fi
[ "$fail" -eq 0 ] && echo "progress: ok"
exit "$fail"
