#!/usr/bin/env bash
# Queue wait of the morning rush: jobs started 09:00-09:30 Shanghai time
# (01:00-01:30 UTC), per policy, from a decision log.
#   tide simulate -c cluster.yaml -t jobs.csv --decision-log decisions.log -q
#   ./rush-wait.sh decisions.log
set -euo pipefail
log=${1:?usage: rush-wait.sh DECISION_LOG}
for policy in $(awk '{print $2}' "$log" | sort -u); do
  grep -E "T01:[0-2][0-9]:[0-9]{2}Z $policy start " "$log" | sed -E 's/.*waited //' | awk -v p="$policy" '
    function secs(s,   t, n, u) {
      t = 0
      while (match(s, /^[0-9]+[hms]/)) {
        n = substr(s, 1, RLENGTH - 1) + 0; u = substr(s, RLENGTH, 1)
        t += (u == "h" ? 3600 : u == "m" ? 60 : 1) * n; s = substr(s, RLENGTH + 1)
      }
      return t
    }
    { w = secs($1); sum += w; n++; if (w > 60) late++ }
    END { printf "%-20s %d jobs, mean wait %.0fs, %d waited over a minute\n", p, n, sum / n, late }'
done
