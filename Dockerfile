# One image for the three services of the stack (gateway, reference upstream MCP server, platform API);
# docker-compose.yml picks the entry point with `command:`. TypeScript runs through scripts/register-ts.mjs
# (esbuild strips the types as each file loads; no build output).
#
#   docker build -t mcp-catalog-gateway .                          node:20-bookworm-slim from its registry
#   docker build --build-arg NODE_IMAGE=mcp-ci/node:... .          a local base image (CI: .ci/compose.sh)
#
# CI only: an npm cache in .tmp/docker-npm-cache (absent in a normal checkout) is copied in so that
# `npm ci --offline` installs without the network; NPM_CI_FLAGS=--offline makes a missing package fail fast.
ARG NODE_IMAGE=node:20-bookworm-slim

# Stage 1: the full dependency tree, to type-check the sources the runtime image will carry.
FROM ${NODE_IMAGE} AS typecheck
ARG NPM_CI_FLAGS=""
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /src
COPY package.json package-lock.json ./
# The [e] glob lets the cache be absent (package.json is there only because COPY needs one source that exists).
COPY package.json .tmp/docker-npm-cach[e] /tmp/npm-cache/
RUN npm ci --no-audit --no-fund --cache /tmp/npm-cache ${NPM_CI_FLAGS} && rm -rf /tmp/npm-cache
COPY tsconfig.json ./
COPY config ./config
COPY gateway ./gateway
COPY search ./search
COPY upstream ./upstream
# The search's word vectors (search/semantic/word-vectors.ts reads them at run time; without them its word arm is off).
COPY data/word-vectors ./data/word-vectors
# The project's tsconfig also covers tests, bench and dev scripts, which the image does not carry.
# chmod: a checkout made under a strict umask must still be readable by the runtime's `node` user.
RUN echo '{"extends":"./tsconfig.json","include":["config","gateway","search","upstream"]}' >tsconfig.image.json \
    && npx tsc --noEmit -p tsconfig.image.json \
    && chmod -R a+rX tsconfig.json config gateway search upstream data

# Stage 2: production dependencies only, the checked sources, a non-root user.
FROM ${NODE_IMAGE} AS runtime
ARG NPM_CI_FLAGS=""
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false \
    HEALTHCHECK_URL=http://127.0.0.1:3000/healthz
WORKDIR /app
COPY package.json package-lock.json ./
COPY package.json .tmp/docker-npm-cach[e] /tmp/npm-cache/
RUN npm ci --omit=dev --no-audit --no-fund --cache /tmp/npm-cache ${NPM_CI_FLAGS} && rm -rf /tmp/npm-cache \
    && chmod a+r package.json package-lock.json
COPY --from=typecheck /src/tsconfig.json ./
COPY --from=typecheck /src/config ./config
COPY --from=typecheck /src/gateway ./gateway
COPY --from=typecheck /src/search ./search
COPY --from=typecheck /src/upstream ./upstream
COPY --from=typecheck /src/data ./data
COPY scripts/register-ts.mjs scripts/ts-hooks.mjs ./scripts/
# Files stay root-owned and read-only to the process; `node` (uid 1000) is the official images' user.
USER node
EXPOSE 3000
# Node itself probes, so the check needs no curl/wget in the image; compose sets HEALTHCHECK_URL per service.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL,{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# `node --import` keeps one process (no wrapper), so SIGTERM reaches the gateway's graceful shutdown.
CMD ["node", "--import", "./scripts/register-ts.mjs", "gateway/main.ts"]
