#!/usr/bin/env bash
# The kwok provider (src/providers/kwok) against a real API server and kwok:
# starts its own test bed (scripts/k8s-testbed) in a temporary folder, runs
# the kwok_integration_test binary against it, and stops the test bed by PID,
# even on failure. Exit 77 (skipped) when the test bed is not built and Go is
# missing to build it.
#
#   KWOK_INTEGRATION_TEST=build/test/src/kwok_integration_test tests/integration/k8s/kwok_provider.sh
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
TB=$ROOT/scripts/k8s-testbed
BIN=${KWOK_INTEGRATION_TEST:-$ROOT/build/test/src/kwok_integration_test}
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built (ninja kwok_integration_test)"; exit 1; }
if [ -n "${TIDE_K8S_SKIP:-}" ]; then echo "SKIP: $TIDE_K8S_SKIP"; exit 77; fi
for p in curl openssl python3; do
  command -v "$p" >/dev/null || { echo "SKIP: $p is not installed (scripts/deps installs it)"; exit 77; }
done
if ! "$TB" build; then
  command -v go >/dev/null || { echo "SKIP: the Kubernetes test bed is not built and Go is missing (see scripts/k8s-testbed)"; exit 77; }
  exit 1
fi
DIR=$(mktemp -d "${TMPDIR:-/tmp}/tide-kwok-provider.XXXXXX")
finish() {
  local rc=$?
  if [ -f "$DIR/pids" ] && ! "$TB" stop "$DIR"; then
    echo "FAIL: test bed processes left running"; rc=1
  fi
  if [ "$rc" -ne 0 ]; then
    for f in "$DIR"/logs/*.log; do [ -f "$f" ] && { echo "--- tail of $f"; tail -n 15 "$f"; }; done
  fi
  if [ -z "${KEEP:-}" ]; then rm -rf "$DIR"; else echo "kept $DIR"; fi
  exit "$rc"
}
trap finish EXIT
"$TB" start "$DIR"
TIDE_K8S_ENV=$DIR/env "$BIN"
