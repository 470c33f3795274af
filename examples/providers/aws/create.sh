#!/bin/bash
# tide exec provider, create (TEMPLATE: untested against a real AWS account).
#   stdin  {"pool","node","instance_type","tier","region","idempotency_key"}
#   stdout {"id","node","pool","idempotency_key","state","created"}
# Idempotency: the key is EC2's client token. A second run-instances with the
# same token returns the instance the first one made, buying nothing.
#
# Environment (set it for the service that runs `tide run`):
#   AWS_REGION, AWS_PROFILE    the usual aws CLI settings (the request's region wins)
#   TIDE_AWS_AMI               the image the nodes boot; it must start `slurmd -b -N <node>`
#   TIDE_AWS_SUBNET            subnet id
#   TIDE_AWS_SECURITY_GROUP    security group id
#   TIDE_AWS_KEY_NAME          optional EC2 key pair
#   TIDE_AWS_USER_DATA         optional file; every @NODE@ in it becomes the node name
set -euo pipefail
# EC2 instance state -> tide state.
TIDE_JQ_STATE='def tide_state: if . == "pending" then "pending" elif . == "running" then "running"
                               else "terminating" end;'
# LaunchTime "2026-01-05T09:00:00+00:00" (aws CLI v2) or "...00.000Z" (v1) -> Unix seconds.
TIDE_JQ_TIME='def unix_seconds: sub("\\.[0-9]+"; "") | sub("\\+00:00$"; "Z") | fromdateiso8601;'
die() {
  echo "$(basename "$0"): $*" >&2
  exit 2
}
: "${TIDE_AWS_AMI:?set TIDE_AWS_AMI}" "${TIDE_AWS_SUBNET:?set TIDE_AWS_SUBNET}"
: "${TIDE_AWS_SECURITY_GROUP:?set TIDE_AWS_SECURITY_GROUP}"

req=$(cat)
get() { jq -r --arg f "$1" '.[$f] // ""' <<<"$req"; }
node=$(get node) pool=$(get pool) type=$(get instance_type) tier=$(get tier)
region=$(get region) key=$(get idempotency_key)
[[ -n $node && -n $key && -n $type ]] || die "need node, instance_type and idempotency_key"
[[ $node =~ ^[A-Za-z0-9._-]+$ ]] || die "bad node name '$node'"

# Client tokens are at most 64 ASCII characters.
token=$key
((${#token} <= 64)) || token=$(printf '%s' "$key" | sha256sum | cut -c1-64)

tags=$(jq -nc --arg node "$node" --arg pool "$pool" --arg key "$key" \
  '[{ResourceType: "instance", Tags: [{Key: "Name", Value: $node}, {Key: "tide-managed", Value: "true"},
     {Key: "tide-node", Value: $node}, {Key: "tide-pool", Value: $pool}, {Key: "tide-key", Value: $key}]}]')
args=(ec2 run-instances --output json --count 1 --client-token "$token"
  --image-id "$TIDE_AWS_AMI" --instance-type "$type"
  --subnet-id "$TIDE_AWS_SUBNET" --security-group-ids "$TIDE_AWS_SECURITY_GROUP"
  --tag-specifications "$tags")
[[ -n $region ]] && args+=(--region "$region")
[[ -n ${TIDE_AWS_KEY_NAME:-} ]] && args+=(--key-name "$TIDE_AWS_KEY_NAME")
if [[ $tier == spot ]]; then
  args+=(--instance-market-options
    '{"MarketType":"spot","SpotOptions":{"SpotInstanceType":"one-time","InstanceInterruptionBehavior":"terminate"}}')
fi
if [[ -n ${TIDE_AWS_USER_DATA:-} ]]; then
  user_data=$(mktemp)
  trap 'rm -f "$user_data"' EXIT
  sed "s/@NODE@/$node/g" "$TIDE_AWS_USER_DATA" >"$user_data"
  args+=(--user-data "file://$user_data")
fi

# stderr passes through: tide puts it in its error message on a failure.
aws "${args[@]}" |
  jq --arg node "$node" --arg pool "$pool" --arg key "$key" "$TIDE_JQ_STATE $TIDE_JQ_TIME"'
    .Instances[0] // error("run-instances returned no instance")
    | {id: .InstanceId, node: $node, pool: $pool, idempotency_key: $key,
       state: (.State.Name | tide_state), created: (.LaunchTime | unix_seconds)}'
