/**
 * The Helm chart (deploy/helm/mcp-gateway): its values.schema.json carries config/schema.json, so
 * `helm template` refuses what the gateway would refuse at start-up (`npm run chart:schema` copies it);
 * the configuration its values render is one the gateway loads. Rendering, linting and validating the
 * objects need helm, which is not a project dependency: .ci/chart.sh does that in CI.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadConfig } from '../../config/load.ts';
import { gatewayDefinitions, VALUES_SCHEMA_PATH } from '../../scripts/chart-schema.ts';

const chart = new URL('../../deploy/helm/mcp-gateway/', import.meta.url);
const values = (name: string) => parse(readFileSync(new URL(name, chart), 'utf8')) as { config: Record<string, unknown> };

function loads(config: Record<string, unknown>, env: Record<string, string> = {}) {
  const path = join(mkdtempSync(join(tmpdir(), 'chart-config-')), 'gateway.yaml');
  writeFileSync(path, stringify(config));
  return loadConfig({ path, env });
}

/** A schema without what validation ignores (descriptions, x-* annotations): a reworded description needs no new copy. */
function rules(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rules);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== 'description' && !key.startsWith('x-'))
      .map(([key, value]) => [key, rules(value)]),
  );
}

describe('the Helm chart', () => {
  it('values.schema.json holds the rules of config/schema.json as they are (else: npm run chart:schema)', () => {
    const schema = JSON.parse(readFileSync(VALUES_SCHEMA_PATH, 'utf8')) as { definitions: unknown; properties: { config: unknown } };
    expect(rules(schema.definitions), 'config/schema.json changed: run `npm run chart:schema`').toEqual(rules(gatewayDefinitions()));
    expect(schema.properties.config).toEqual({ $ref: '#/definitions/gatewayConfig' });
  });

  it("the default values' config is one the gateway loads: every interface, drain before grace, reload on", () => {
    const config = loads(values('values.yaml').config, { GATEWAY_REPLICAS_DNS_NAME: 'gw-peers.ns.svc' });
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 3000 });
    expect(config.shutdown).toEqual({ drainMs: 5000, graceMs: 20000 });
    expect(config.reload.watch).toBe(true);
    expect(config.replicas.dnsName).toBe('gw-peers.ns.svc');
    // /metrics on its own port: never behind the Ingress's `/`, and scraped once (the peers Service has no such port).
    expect(config.metrics.port).toBe(9464);
  });

  it("every optional part on: the config loads with the Secrets' variables the Deployment sets", () => {
    const base = values('values.yaml').config;
    const allOn = values('ci/all-on-values.yaml').config;
    // Helm merges maps key by key and replaces lists; the TLS files are where the chart mounts them.
    const merged = {
      ...base,
      ...allOn,
      cache: { redis: { ...(allOn.cache as { redis: object }).redis, tls: { caFile: '/etc/mcp-gateway/redis-tls/ca.crt' } } },
    };
    const config = loads(merged, { REDIS_URL: 'rediss://gw:pw@redis:6379', UPSTREAM_TOKEN: 'upstream-token', GATEWAY_CACHE_KEY: 'k'.repeat(32) });
    expect(config.cache).toMatchObject({ store: 'redis', redis: { sentinel: { masterName: 'mymaster' } } });
    expect(config.upstreams[0]!.headers).toEqual({ authorization: 'Bearer upstream-token' });
    expect(config.metrics.port).toBe(9464);
  });
});
