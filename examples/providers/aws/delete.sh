#!/bin/bash
# tide exec provider, delete (TEMPLATE: untested against a real AWS account).
#   stdin {"id","idempotency_key"}; exit 0 = the instance is gone or going.
# Idempotent: terminating a terminated instance succeeds, and an id EC2 no
# longer knows is success too (the contract: deleting what is gone is OK).
set -euo pipefail
die() {
  echo "$(basename "$0"): $*" >&2
  exit 2
}

id=$(jq -r '.id // ""')
[[ $id =~ ^i-[0-9a-f]+$ ]] || die "not an EC2 instance id: '$id'"
if ! out=$(aws ec2 terminate-instances --output json --instance-ids "$id" 2>&1); then
  grep -q 'InvalidInstanceID.NotFound' <<<"$out" && exit 0
  echo "$out" >&2
  exit 1
fi
