#!/bin/bash
# tide exec provider, interruptions (TEMPLATE: untested against a real AWS account).
#   stdin {}; stdout {"interruptions":[{"id","node","at"}...]}
# EC2 gives a spot instance two minutes' notice. From outside the instance the
# notice shows as its spot request's status code marked-for-termination; the
# status update time plus 120 s is when the instance goes. (Alternatives: an
# EventBridge rule on "EC2 Spot Instance Interruption Warning" into SQS, read
# here and remembered until its time; or the instance's own metadata,
# http://169.254.169.254/latest/meta-data/spot/instance-action.)
set -euo pipefail
# LaunchTime "2026-01-05T09:00:00+00:00" (aws CLI v2) or "...00.000Z" (v1) -> Unix seconds.
TIDE_JQ_TIME='def unix_seconds: sub("\\.[0-9]+"; "") | sub("\\+00:00$"; "Z") | fromdateiso8601;'
cat >/dev/null

spot=$(aws ec2 describe-instances --output json \
  --filters Name=tag:tide-managed,Values=true Name=instance-lifecycle,Values=spot \
  Name=instance-state-name,Values=pending,running |
  jq -c '[.Reservations[].Instances[]
          | {id: .InstanceId, node: ((.Tags // []) | map(select(.Key == "tide-node")) | .[0].Value // "")}]')
if [[ $(jq length <<<"$spot") == 0 ]]; then
  echo '{"interruptions":[]}'
  exit 0
fi
ids=$(jq -r 'map(.id) | join(",")' <<<"$spot")

aws ec2 describe-spot-instance-requests --output json \
  --filters Name=status-code,Values=marked-for-termination "Name=instance-id,Values=$ids" |
  jq --argjson spot "$spot" "$TIDE_JQ_TIME"'
    ($spot | map({key: .id, value: .node}) | from_entries) as $node
    | {interruptions: [.SpotInstanceRequests[] | select(.InstanceId != null)
        | {id: .InstanceId, node: $node[.InstanceId], at: ((.Status.UpdateTime | unix_seconds) + 120)}]}'
