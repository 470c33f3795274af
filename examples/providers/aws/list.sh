#!/bin/bash
# tide exec provider, list (TEMPLATE: untested against a real AWS account).
#   stdin {}; stdout {"instances":[{"id","node","pool","idempotency_key","state","created"}...]}
# Every instance tagged tide-managed=true that is not terminated, booting ones
# included, so a restarted tide finds what it bought. The aws CLI follows
# pagination itself. Add Name=tag:tide-pool,Values=<pool> to narrow it.
set -euo pipefail
# EC2 instance state -> tide state.
TIDE_JQ_STATE='def tide_state: if . == "pending" then "pending" elif . == "running" then "running"
                               else "terminating" end;'
# LaunchTime "2026-01-05T09:00:00+00:00" (aws CLI v2) or "...00.000Z" (v1) -> Unix seconds.
TIDE_JQ_TIME='def unix_seconds: sub("\\.[0-9]+"; "") | sub("\\+00:00$"; "Z") | fromdateiso8601;'
cat >/dev/null

aws ec2 describe-instances --output json \
  --filters Name=tag:tide-managed,Values=true \
  Name=instance-state-name,Values=pending,running,shutting-down,stopping |
  jq "$TIDE_JQ_STATE $TIDE_JQ_TIME"'
    {instances: [.Reservations[].Instances[]
      | (.Tags // [] | map({key: .Key, value: .Value}) | from_entries) as $t
      | if ($t["tide-node"] // "") == "" then error("instance \(.InstanceId) has no tide-node tag") else . end
      | {id: .InstanceId, node: $t["tide-node"], pool: ($t["tide-pool"] // ""),
         idempotency_key: ($t["tide-key"] // ""), state: (.State.Name | tide_state),
         created: (.LaunchTime | unix_seconds)}]}'
