#!/usr/bin/env bash
# Proves the full stack of docker-compose.yml on a machine that cannot pull images from any registry:
# installs Debian's docker.io and docker-compose (1.29), starts dockerd by hand (no systemd), builds
# local base images from Debian binaries (.ci/local-images.sh), runs `docker-compose up -d`, then
# checks the documented endpoints through nginx and every gateway replica through Prometheus.
# Always tears the stack down, stops the daemon it started and removes its network state (trap).
#
#   bash .ci/compose.sh          (as root; about 1-2 min on a warm machine)
#
# Nothing here contacts an image registry: every image is local (IMAGE_PULL_POLICY=never) and the
# app image's `npm ci` runs --offline from a cache primed on the host through npm's usual registry.
set -euo pipefail
cd "$(dirname "$0")/.."

export DEBIAN_FRONTEND=noninteractive
export COMPOSE_PROJECT_NAME=mcpgwci
export COMPOSE_DOCKER_CLI_BUILD=0 DOCKER_BUILDKIT=0 # docker-compose 1.29's own (classic) builder
export DOCKER_HOST=unix:///var/run/docker.sock
# Debian's client matches the daemon; a newer client-only build may sit earlier on PATH.
DOCKER=/usr/bin/docker
NPM_CACHE=${MCP_CI_NPM_CACHE:-/var/cache/mcp-gateway-ci/npm}

t0=$SECONDS
log() { printf '[compose.sh %4ds] %s\n' "$((SECONDS - t0))" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }
phase_start=$SECONDS
timings=()
phase() { timings+=("$1 $((SECONDS - phase_start))s"); phase_start=$SECONDS; }

# wait_until SECONDS WHAT CMD...: retries CMD every second until it succeeds or the deadline passes.
wait_until() {
  local limit=$1 what=$2 deadline=$((SECONDS + $1)); shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out after ${limit}s waiting for $what"
    sleep 1
  done
}
compose() { local limit=$1; shift; timeout "$limit" docker-compose -f docker-compose.yml "$@"; }
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
# json FILE EXPR: evaluates EXPR with `j` bound to the parsed file (prints the result).
json() { node -e "const j=JSON.parse(require('fs').readFileSync(process.argv[1],'utf8')); const v=($2); console.log(typeof v==='string'?v:JSON.stringify(v))" "$1"; }

# ---------------------------------------------------------------- teardown (always)
started_dockerd=""
dockerd_pid=""
state=$(mktemp -d "${TMPDIR:-/tmp}/compose-ci.XXXXXX")
cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  if "$DOCKER" info >/dev/null 2>&1; then
    if [ "$rc" -ne 0 ]; then
      log "stack state at failure:"
      compose 60 ps >&2
      compose 60 logs --no-color --tail=60 >&2
    fi
    compose 120 down --volumes --remove-orphans --timeout 15 >/dev/null 2>&1 || log "warning: compose down failed"
    # Old dangling images only: the typecheck stage's layers are untagged too, and they are the build cache.
    timeout 60 "$DOCKER" image prune --force --filter until=168h >/dev/null 2>&1
  fi
  rm -rf .tmp/docker-npm-cache
  if [ -n "$started_dockerd" ]; then
    stop_dockerd
    clean_network
  fi
  rm -rf "$state"
  log "teardown done (exit $rc)"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

stop_dockerd() {
  kill -TERM "$dockerd_pid" 2>/dev/null
  local deadline=$((SECONDS + 30))
  while kill -0 "$dockerd_pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.5; done
  if kill -0 "$dockerd_pid" 2>/dev/null; then
    log "warning: dockerd ignored SIGTERM for 30 s; killing it"
    kill -KILL "$dockerd_pid" 2>/dev/null
  fi
  wait "$dockerd_pid" 2>/dev/null
}

# Removes what dockerd leaves behind on exit: its bridges, its iptables chains and rules, the forwarding
# switch and FORWARD policy it changed (restored to what they were before it started).
clean_network() {
  local link table rule chain
  for link in $(ip -o link show type bridge 2>/dev/null | awk -F': ' '$2 == "docker0" || $2 ~ /^br-/ {print $2}'); do
    ip link delete "$link" 2>/dev/null
  done
  for table in filter nat; do
    iptables -t "$table" -S 2>/dev/null | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*(DOCKER|docker0|br-)' |
      while read -r rule; do eval "iptables -t $table ${rule/#-A/-D}" 2>/dev/null; done
    for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^DOCKER/ {print $2}'); do
      iptables -t "$table" -F "$chain" 2>/dev/null
    done
    for chain in $(iptables -t "$table" -S 2>/dev/null | awk '$1 == "-N" && $2 ~ /^DOCKER/ {print $2}'); do
      iptables -t "$table" -X "$chain" 2>/dev/null
    done
  done
  [ -n "${forward_policy:-}" ] && iptables -P FORWARD "$forward_policy" 2>/dev/null
  [ -n "${ip_forward:-}" ] && echo "$ip_forward" >/proc/sys/net/ipv4/ip_forward 2>/dev/null
  log "dockerd stopped, network state cleaned"
}

# ---------------------------------------------------------------- 1. packages
packages=(docker.io docker-compose busybox-static redis-server nginx prometheus curl iptables iproute2)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  timeout 300 apt-get update -qq
  timeout 600 apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$state/apt.log" 2>&1 ||
    { tail -30 "$state/apt.log" >&2; fail "apt-get install failed"; }
fi
phase packages

promtool check config deploy/prometheus/prometheus.yml >"$state/promtool.log" 2>&1 ||
  { cat "$state/promtool.log" >&2; fail "deploy/prometheus: promtool check config failed"; }
docker-compose -f docker-compose.yml config --quiet || fail "docker-compose.yml is invalid"

# ---------------------------------------------------------------- 2. docker daemon
if timeout 10 "$DOCKER" info >/dev/null 2>&1; then
  log "using the docker daemon already running"
else
  ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)
  forward_policy=$(iptables -S FORWARD 2>/dev/null | awk '$1 == "-P" {print $3}')
  log "starting dockerd (log: $state/dockerd.log)"
  dockerd --pidfile "$state/dockerd.pid" --host "$DOCKER_HOST" >"$state/dockerd.log" 2>&1 &
  dockerd_pid=$!
  started_dockerd=1
  deadline=$((SECONDS + 60))
  until timeout 5 "$DOCKER" info >/dev/null 2>&1; do
    if ! kill -0 "$dockerd_pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      tail -20 "$state/dockerd.log" >&2
      fail "dockerd did not come up"
    fi
    sleep 0.5
  done
fi
phase dockerd

# ---------------------------------------------------------------- 3. local images
images=$(DOCKER="$DOCKER" timeout 600 bash .ci/local-images.sh) || fail "building the local base images failed"
while IFS='=' read -r name value; do
  [[ "$name" =~ ^(NODE|REDIS|NGINX|PROMETHEUS)_IMAGE$ ]] && export "$name=$value"
done <<<"$images"
log "local images: ${images//$'\n'/ }"
phase base-images

# The app image installs with `npm ci --offline` from this cache (Dockerfile); it is primed once per
# lockfile on the host through npm's registry, as `npm ci` itself would.
lock_digest=$(sha256sum package-lock.json | cut -c1-16)
if [ ! -e "$NPM_CACHE/.primed-$lock_digest" ]; then
  log "priming the npm cache for the image build ($NPM_CACHE)"
  rm -rf "$NPM_CACHE" && mkdir -p "$NPM_CACHE"
  prime=$(mktemp -d "$state/prime.XXXXXX")
  cp package.json package-lock.json "$prime/"
  (cd "$prime" && timeout 600 npm ci --prefer-offline --ignore-scripts --no-audit --no-fund --cache "$NPM_CACHE" >/dev/null) ||
    fail "npm could not fetch the dependencies for the image build"
  rm -rf "$prime" "$NPM_CACHE/_logs"
  touch "$NPM_CACHE/.primed-$lock_digest"
fi
rm -rf .tmp/docker-npm-cache && mkdir -p .tmp/docker-npm-cache
cp -al "$NPM_CACHE/_cacache" .tmp/docker-npm-cache/ 2>/dev/null || cp -a "$NPM_CACHE/_cacache" .tmp/docker-npm-cache/
phase npm-cache

# ---------------------------------------------------------------- 4. build and start
export APP_IMAGE=mcp-catalog-gateway:ci IMAGE_PULL_POLICY=never NPM_CI_FLAGS=--offline
export HEALTHCHECK_INTERVAL=2s PUBLISH_ADDRESS=127.0.0.1
HTTP_PORT=$(free_port)
PROMETHEUS_PORT=$(free_port)
while [ "$PROMETHEUS_PORT" = "$HTTP_PORT" ]; do PROMETHEUS_PORT=$(free_port); done
export HTTP_PORT PROMETHEUS_PORT
compose 120 down --volumes --remove-orphans >/dev/null 2>&1 || true # leftovers of an interrupted run
chmod -R a+rX deploy # bind-mounted configs are read by nginx's and Prometheus's unprivileged users
log "building the app image"
compose 900 build >"$state/build.log" 2>&1 || { tail -40 "$state/build.log" >&2; fail "docker-compose build failed"; }
phase build
log "starting the stack (nginx on 127.0.0.1:$HTTP_PORT, prometheus on 127.0.0.1:$PROMETHEUS_PORT)"
# depends_on conditions make `up` wait until platform, upstream, redis and both gateways are healthy.
compose 300 up -d --no-build >&2 || fail "docker-compose up failed"
phase up

# ---------------------------------------------------------------- 5. checks
base="http://127.0.0.1:$HTTP_PORT"
prom="http://127.0.0.1:$PROMETHEUS_PORT"
checks=0
ok() { checks=$((checks + 1)); log "ok: $*"; }

gateways=$("$DOCKER" ps --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" \
  --filter label=com.docker.compose.service=gateway --filter health=healthy --quiet | wc -l)
[ "$gateways" -eq 2 ] || fail "expected 2 healthy gateway replicas, got $gateways"
ok "2 gateway replicas healthy"

wait_until 30 "GET /healthz through nginx" curl -fsS --max-time 5 "$base/healthz"
ok "GET /healthz through nginx"
wait_until 60 "GET /readyz through nginx" curl -fsS --max-time 5 "$base/readyz"
ok "GET /readyz through nginx"

code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "$base/metrics")
[ "$code" = 404 ] || fail "nginx must not publish /metrics (got HTTP $code)"
ok "/metrics is not published by nginx"

# mcp PATH REQUEST-JSON OUT-FILE METHOD [NAME]: one modern-era (2026-07-28) JSON-RPC request with the demo key.
mcp() {
  curl -sS --max-time 15 -o "$3" -D "$3.headers" -w '%{http_code}' "$base$1" \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $4" ${5:+-H "Mcp-Name: $5"} \
    -H 'X-CPZ-Key: cpz_demo_data' -H 'X-CPZ-Secret: demo-secret-data' -H "X-Request-Id: compose-ci-${4/\//-}" \
    --data "$2"
}
# A Streamable HTTP answer is JSON or one SSE `message` event; take the JSON-RPC message either way.
unwrap() { if grep -q '^data:' "$1"; then sed -n 's/^data: //p' "$1" | tail -1 >"$1.json"; else cp "$1" "$1.json"; fi; }
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"compose-ci","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}'

for i in 1 2 3 4; do # several requests, so the round-robin reaches both replicas
  code=$(mcp /mcp "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/list\",\"params\":{$meta}}" "$state/list" tools/list || true)
  [ "$code" = 200 ] || { cat "$state/list" >&2; fail "tools/list through nginx: HTTP $code"; }
done
unwrap "$state/list"
tools=$(json "$state/list.json" "(j.result.tools||[]).map(t=>t.name).join(' ')")
[[ " $tools " == *" list_accounts "* ]] || { cat "$state/list.json" >&2; fail "tools/list for cpz_demo_data lacks list_accounts"; }
[[ " $tools " != *" place_order "* ]] || fail "tools/list for cpz_demo_data shows place_order, outside its scopes"
grep -qi '^x-request-id: compose-ci-tools-list' "$state/list.headers" || fail "X-Request-Id was not returned through nginx"
ok "tools/list with the demo key: $(wc -w <<<"$tools") tools (scope-filtered), X-Request-Id echoed"

code=$(mcp /mcp "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{\"name\":\"list_accounts\",\"arguments\":{},$meta}}" "$state/call" tools/call list_accounts || true)
[ "$code" = 200 ] || { cat "$state/call" >&2; fail "tools/call list_accounts: HTTP $code"; }
unwrap "$state/call"
[ "$(json "$state/call.json" "Boolean(j.result) && j.result.isError !== true")" = true ] ||
  { cat "$state/call.json" >&2; fail "tools/call list_accounts did not succeed"; }
ok "tools/call list_accounts through nginx"

code=$(mcp /mcp/compact "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\",\"params\":{$meta}}" "$state/compact" tools/list || true)
[ "$code" = 200 ] || { cat "$state/compact" >&2; fail "tools/list on /mcp/compact: HTTP $code"; }
unwrap "$state/compact"
compact=$(json "$state/compact.json" "(j.result.tools||[]).map(t=>t.name).join(' ')")
[[ " $compact " == *" search_tools "* && " $compact " == *" call_tool "* ]] ||
  { cat "$state/compact.json" >&2; fail "/mcp/compact does not advertise search_tools and call_tool"; }
ok "tools/list on /mcp/compact: $compact"

# The replicas share their caches through Redis, keyed by digests: entries exist, no secret in a key.
keys=$(compose 30 exec -T redis redis-cli --scan) || fail "cannot list the Redis keys"
[ -n "$keys" ] || fail "the gateways stored nothing in Redis"
! grep -q 'demo-secret\|cpz_demo' <<<"$keys" || fail "a credential appears in a Redis key"
ok "shared cache in Redis: $(wc -l <<<"$keys") keys, none naming a credential"

# Prometheus: both replicas discovered through DNS and scraped, and the traffic above counted.
targets_up() {
  curl -fsS --max-time 5 "$prom/api/v1/targets?state=active" -o "$state/targets" &&
    [ "$(json "$state/targets" "j.data.activeTargets.filter(t=>t.labels.job==='mcp-gateway'&&t.health==='up').length")" = 2 ]
}
wait_until 90 "Prometheus to scrape both gateway replicas" targets_up
ok "Prometheus scrapes 2 gateway replicas: $(json "$state/targets" "j.data.activeTargets.filter(t=>t.labels.job==='mcp-gateway').map(t=>t.scrapeUrl).join(' ')")"

# query PROMQL: the first sample's value, or empty.
query() { curl -fsS --max-time 5 "$prom/api/v1/query" --data-urlencode "query=$1" -o "$state/q" && json "$state/q" "j.data.result.length ? j.data.result[0].value[1] : ''"; }
positive() { local v; v=$(query "$1") && [ -n "$v" ] && node -e "process.exit(Number(process.argv[1])>0?0:1)" "$v"; }
wait_until 60 "mcp_tool_calls_total in Prometheus" positive 'sum(mcp_tool_calls_total)'
ok "mcp_tool_calls_total scraped: $(query 'sum(mcp_tool_calls_total)')"
wait_until 60 "http_request_duration_seconds_count from both replicas" positive 'count(count by (instance) (http_request_duration_seconds_count{job="mcp-gateway"}) ) == 2'
ok "http_request_duration_seconds_count scraped from both replicas"

# Built-in OAuth across the replicas (issue 14): a sign-in through nginx, whose steps the round-robin
# spreads over both replicas, then the token on several requests, a refresh, and the same after both
# replicas restart (grants, refresh tokens and the sealing key live in Redis). Prints no token.
oauth_tokens="$state/oauth-tokens.json"
node --import tsx tests/helpers/oauth-check.ts issue "$base" "$oauth_tokens" >&2 || fail "OAuth sign-in through nginx failed"
node --import tsx tests/helpers/oauth-check.ts check "$base" "$oauth_tokens" 6 >&2 || fail "the OAuth token did not work on every replica"
ok "OAuth: a token issued through nginx works on both replicas and refreshes"
compose 120 restart gateway >&2 || fail "restarting the gateway replicas failed"
healthy_gateways() {
  [ "$("$DOCKER" ps --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" \
    --filter label=com.docker.compose.service=gateway --filter health=healthy --quiet | wc -l)" -eq 2 ]
}
wait_until 120 "both gateway replicas healthy after the restart" healthy_gateways
wait_until 30 "GET /readyz through nginx after the restart" curl -fsS --max-time 5 "$base/readyz"
node --import tsx tests/helpers/oauth-check.ts check "$base" "$oauth_tokens" 6 >&2 || fail "the OAuth token stopped working when the replicas restarted"
ok "OAuth: the token and its refresh token survive a restart of both replicas"
phase checks

log "compose stack: all $checks checks passed in $((SECONDS - t0))s (${timings[*]})"
