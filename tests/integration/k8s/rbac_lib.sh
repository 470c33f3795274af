#!/usr/bin/env bash
# Shared by rbac.sh and rbac_refused.sh, after lib.sh's k8s_start: the
# RBAC objects of deploy/kubernetes/ applied to the test bed (as its admin),
# and a token of the ServiceAccount tide-system/tide from the TokenRequest
# API, so that the test talks to the API server, or runs tide, as the
# deployment's pods would: with the manifests' rules and nothing else.
DEPLOY=${TIDE_DEPLOY_DIR:-$ROOT/deploy/kubernetes}  # another folder: to see these tests fail on a broken copy
APPLY=$ROOT/tests/integration/k8s/apply.py
RBAC_KINDS=Namespace,ServiceAccount,ClusterRole,ClusterRoleBinding,Role,RoleBinding

# apply_manifests KINDS [apply.py flags]: the objects of those kinds in
# deploy/kubernetes/, POSTed by apply.py as the test bed's admin; fails the
# test if any is refused.
apply_manifests() {
  local kinds=$1
  shift
  if python3 -c 'import yaml' 2>/dev/null; then :; else
    echo "SKIP: python3's yaml module is missing (scripts/deps installs python3-yaml)"; exit 77
  fi
  if python3 "$APPLY" --server "$K8S_API" --token-file "$K8S_TOKEN_FILE" --cacert "$K8S_CA_FILE" --strict \
       --kinds "$kinds" "$@" "$DEPLOY" > "$DIR/apply.log" 2>&1; then
    ok "deploy/kubernetes applied ($kinds$([ $# -gt 0 ] && echo "; $*")): $(tr '\n' ';' < "$DIR/apply.log")"
  else
    bad "deploy/kubernetes not applied: $(cat "$DIR/apply.log")"
  fi
}

# tide_token: SA_TOKEN (also in $DIR/sa-token, mode 0600), a token of
# tide-system/tide from the TokenRequest API, signed by the test bed's
# service-account key; then checks whom the API server takes it for.
tide_token() {
  api POST /api/v1/namespaces/tide-system/serviceaccounts/tide/token \
    '{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{"expirationSeconds":3600}}'
  [ "$CODE" = 201 ] || { bad "TokenRequest for tide-system/tide: HTTP $CODE: ${BODY:0:300}"; exit 1; }
  SA_TOKEN=$(jget 'd["status"]["token"]')
  (umask 077; printf '%s\n' "$SA_TOKEN" > "$DIR/sa-token")
  as_tide POST /apis/authentication.k8s.io/v1/selfsubjectreviews \
    '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}'
  local who; who=$(jget 'd["status"]["userInfo"]["username"]')
  if [ "$who" = system:serviceaccount:tide-system:tide ]; then
    ok "a TokenRequest token authenticates as $who"
  else
    bad "the token authenticates as '$who' (HTTP $CODE)"; exit 1
  fi
}

# as_tide METHOD PATH [BODY [CONTENT-TYPE]]: lib.sh's api, with tide's token.
as_tide() {
  local admin=$TOKEN
  TOKEN=$SA_TOKEN
  api "$@"
  TOKEN=$admin
}

# tide_kubeconfig FILE: a kubeconfig with the test bed's address and CA, and
# the service account's token (tokenFile, as in a pod).
tide_kubeconfig() {
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster: {server: "$K8S_API", certificate-authority: "$K8S_CA_FILE"}
users:
- name: tide-system-tide
  user: {tokenFile: "$DIR/sa-token"}
contexts:
- name: tide
  context: {cluster: testbed, user: tide-system-tide}
current-context: tide
EOF
}
