#!/bin/bash
# Crash recovery: tide is killed with SIGKILL in the middle of a scale-up
# (once at the worst moment: after the provider created the instance and
# before the store recorded it, and once at an arbitrary moment), then
# restarted. No duplicate instance, no leaked one, and the ledger holds one
# closed entry per instance.
. "$(dirname "$0")/lib.sh"
require sqlite3
lab_init crash "${PORT_BASE:-17500}"
write_tide_config
lab_start
jobscript work 15
for i in 1 2 3 4 5 6; do sbatch -p gpu --gres=gpu:2 -o /dev/null "$LAB/jobs/work.sh" >/dev/null; done
# 1. The worst moment, by fault injection: tide SIGKILLs itself right after
#    the provider's create returned, before the store recorded the instance.
TIDE_FAULT=kill-after-create "$TIDE" run -c "$LAB/tide.yaml" >> "$LAB/log/tide.log" 2>&1 &
pid=$!
started "$pid" tide-crash
rc=0; wait "$pid" || rc=$?
[ "$rc" = 137 ] && ok "tide died by SIGKILL after the create (exit $rc)" || bad "tide exited $rc, expected 137"
n=$(ls "$LAB/provider/instances" | wc -l)
[ "$n" = 1 ] && ok "the provider holds 1 instance the store never saw committed" || bad "instances at the provider: $n"
pending=$(sqlite3 "$LAB/state.db" "select count(*) from actions where state='pending' and kind='create'")
[ "$pending" = 1 ] && ok "the store has the create as pending (key recorded before the call)" || bad "pending creates: $pending"
# 2. Restart; then an external kill -9 while it buys the second node.
tide_start
grep -q "recovered: the create of node .* reached the provider" "$LAB/log/tide.log" && ok "restart adopted the instance: $(grep -m1 'recovered:' "$LAB/log/tide.log" | cut -d' ' -f3-)" || bad "no recovery line in the log"
wait_for 20 'grep -c "bought node" "$LAB/log/tide.log" | grep -q "[1-9]"' || true
kill -KILL "$TIDE_PID"; wait "$TIDE_PID" 2>/dev/null || true
ok "tide killed with SIGKILL during the scale-up"
tide_start
wait_for 120 '[ "$(squeue -h | wc -l)" = 0 ]' && ok "all six jobs completed" || bad "jobs left: $(squeue -h -o '%i %T %r' | tr '\n' ';')"
dups=$(for f in "$LAB"/provider/instances/*; do [ -e "$f" ] && grep -o '"node": *"[^"]*"' "$f"; done | sort | uniq -d)
[ -z "$dups" ] && ok "no node has two instances" || bad "duplicate instances: $dups"
live_db=$(sqlite3 "$LAB/state.db" "select count(*) from instances where deleted is null")
live_p=$(ls "$LAB/provider/instances" | wc -l)
[ "$live_db" = "$live_p" ] && ok "store and provider agree: $live_p live instance(s)" || bad "store has $live_db live, provider $live_p"
wait_for 60 '[ "$(ls "$LAB/provider/instances" | wc -l)" = 0 ]' && ok "every instance released after the idle time (none leaked)" || bad "instances left: $(ls "$LAB/provider/instances")"
sleep 3
total=$(sqlite3 "$LAB/state.db" "select count(*) from instances")
closed=$(sqlite3 "$LAB/state.db" "select count(*) from ledger")
[ "$total" -ge 1 ] && [ "$total" = "$closed" ] && ok "ledger consistent: $total instance(s), $closed closed ledger entr(ies)" || bad "instances $total, ledger entries $closed"
still=$(sqlite3 "$LAB/state.db" "select count(*) from actions where state='pending'")
[ "$still" = 0 ] && ok "no action left pending" || bad "$still actions pending"
tide_stop
