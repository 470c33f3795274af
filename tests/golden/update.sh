#!/usr/bin/env bash
# Regenerates the golden files from the current build. A deliberate step:
# review `git diff tests/golden` before committing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tide=${TIDE:-$here/../../build/tide}
for dir in "$here"/small; do
  mkdir -p "$dir/expected"
  (cd "$dir" && "$tide" simulate --config cluster.yaml --trace jobs.csv --threads 1 \
     --json expected/summary.json --decision-log expected/decisions.log > expected/table.txt)
done
while IFS='|' read -r name args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  (cd "$here/errors" && eval "\"$tide\" $args" > /dev/null 2> "expected/$name.txt" || true)
done < "$here/errors/cases.txt"
for ex in "$here"/../../examples/*/expected.txt; do
  dir=$(dirname "$ex")
  if [[ -f "$dir/command.txt" ]]; then
    read -r -a args < "$dir/command.txt"
    (cd "$dir" && "$tide" "${args[@]}" > expected.txt)
  else
    (cd "$dir" && "$tide" simulate --config cluster.yaml --trace jobs.csv --threads 1 > expected.txt)
  fi
done
echo "regenerated; review: git diff -- $here $here/../../examples"
