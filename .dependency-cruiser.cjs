/**
 * The layering rules of the gateway (ARCHITECTURE.md, "The rules the structure enforces"), checked in CI
 * by `npm run lint:deps`. tests/tooling/layering.test.ts proves each rule fires on a tree that breaks it.
 */
const httpOrServer = ['^gateway/http/', '^gateway/mcp/', '(^|/)node_modules/(koa|@koa/[^/]+|@modelcontextprotocol/(server|node))/'];

/**
 * The drawn order of gateway/ (gateway/README.md, "The layers"), top to bottom: each layer imports only
 * layers drawn below it, type-only imports included. One rule per layer, so a report names the layer
 * an import runs back up from.
 */
const LAYERS = [
  ['entry', ['main\\.ts$', 'cli/']],
  ['gateway', ['gateway\\.ts$']],
  ['runtime', ['runtime\\.ts$']],
  ['http', ['http/']],
  ['mcp', ['mcp/']],
  ['runtime-state', ['runtime-state\\.ts$']],
  ['surfaces', ['surfaces/']],
  ['ports', ['ports\\.ts$']],
  ['ops', ['ops/']],
  ['policy', ['policy/']],
  ['catalog', ['catalog/']],
  ['upstream', ['upstream/']],
  ['auth', ['auth/']],
  ['checks', ['checks/']],
  ['sandbox', ['sandbox/']],
  ['store', ['store/']],
  ['obs', ['obs/']],
  ['errors', ['errors\\.ts$']],
  ['wire', ['wire/']],
  ['reload', ['reload/']],
];
const layerPaths = (layers) => layers.flatMap(([, paths]) => paths.map((path) => `^gateway/${path}`));
const layerOrder = LAYERS.slice(1).map(([name, paths], i) => ({
  name: `layer-order-${name}`,
  severity: 'error',
  comment: `gateway/ ${name} imports no layer drawn above it (${LAYERS.slice(0, i + 1)
    .map(([above]) => above)
    .join(', ')}).`,
  from: { path: layerPaths([[name, paths]]) },
  to: { path: layerPaths(LAYERS.slice(0, i + 1)) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circles anywhere, `import type` edges included: a circle of types is a circle of meaning.',
      from: {},
      to: { circular: true },
    },
    ...layerOrder,
    {
      name: 'pure-layers-no-http-or-server',
      severity: 'error',
      comment: 'policy/, catalog/ and search/ are functions of data: no HTTP, Koa or MCP server code.',
      from: { path: '^(gateway/policy|gateway/catalog|search)/' },
      to: { path: httpOrServer, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'search-knows-no-gateway',
      severity: 'error',
      comment: 'search/ ranks tool definitions: the gateway uses it, never the reverse.',
      from: { path: '^search/' },
      to: { path: '^gateway/' },
    },
    {
      name: 'config-knows-no-gateway-or-search',
      severity: 'error',
      comment: 'config/ loads and types the configuration every layer reads: it imports none of them.',
      from: { path: '^config/' },
      to: { path: '^(gateway|search)/' },
    },
    {
      name: 'gateway-and-reference-server-apart',
      severity: 'error',
      comment: 'The gateway and the reference upstream only speak MCP over HTTP, like any real pair.',
      from: { path: '^gateway/' },
      to: { path: '^upstream/' },
    },
    {
      name: 'reference-server-knows-no-gateway',
      severity: 'error',
      from: { path: '^upstream/' },
      to: { path: '^gateway/' },
    },
    {
      name: 'tests-never-import-bench',
      severity: 'error',
      comment: 'Benchmarks may import tests helpers, never the reverse.',
      from: { path: '^tests/' },
      to: { path: '^bench/' },
    },
    {
      name: 'runtime-never-imports-tests-or-bench',
      severity: 'error',
      from: { path: '^(gateway|search|config|upstream)/' },
      to: { path: '^(tests|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
