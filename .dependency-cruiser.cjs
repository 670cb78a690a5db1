/**
 * The layering rules of the gateway (ARCHITECTURE.md, "The rules the structure enforces"), checked in CI
 * by `npm run lint:deps`. tests/tooling/layering.test.ts proves each rule fires on a tree that breaks it.
 */
const httpOrServer = ['^gateway/http/', '^gateway/mcp/', '(^|/)node_modules/(koa|@koa/[^/]+|@modelcontextprotocol/(server|node))/'];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import circles anywhere (a cycle made only of `import type` edges is erased at compile time and allowed).',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'pure-layers-no-http-or-server',
      severity: 'error',
      comment: 'policy/, catalog/ and search/ are functions of data: no HTTP, Koa or MCP server code.',
      from: { path: '^(gateway/policy|gateway/catalog|search)/' },
      to: { path: httpOrServer, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'upstream-knows-no-policy',
      severity: 'error',
      comment: 'The upstream layer moves bytes; what a caller may do is decided above it.',
      from: { path: '^gateway/upstream/' },
      to: { path: '^gateway/(policy|surfaces)/' },
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
