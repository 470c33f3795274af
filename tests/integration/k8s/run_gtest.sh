#!/usr/bin/env bash
# A GoogleTest binary against a real API server: starts its own test bed
# (scripts/k8s-testbed) in a temporary folder, runs BINARY with TIDE_K8S_ENV
# naming the test bed's env file, and stops the test bed by PID, even on
# failure. Exit 77 (skipped) when the test bed cannot be built here. The
# Kubernetes client's (kube_integration_test) and the kwok provider's
# (kwok_integration_test) integration tests run this way.
#
#   tests/integration/k8s/run_gtest.sh build/test/src/kube_integration_test
. "$(dirname "$0")/lib.sh"
BIN=${1:?usage: run_gtest.sh BINARY}
[ -x "$BIN" ] || { echo "FAIL: $BIN is not built"; exit 1; }
k8s_init "$(basename "$BIN")"
k8s_start
if TIDE_K8S_ENV=$DIR/env "$BIN"; then ok "$(basename "$BIN")"; else bad "$(basename "$BIN"): see above"; fi
