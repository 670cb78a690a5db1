/**
 * docs/config.md is generated from config/schema.json (config/reference.ts): every key has a one-line
 * description and a default (or `x-default` text), and the committed reference is what the schema says.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configKeys, REFERENCE_PATH, renderConfigReference, undocumentedKeys } from '../../config/reference.ts';

describe('the configuration reference', () => {
  it('documents every key of the schema with a description and a default', () => {
    expect(undocumentedKeys()).toEqual([]);
  });

  it('is current: docs/config.md is what `npm run docs:config` writes', () => {
    expect(readFileSync(REFERENCE_PATH, 'utf8')).toBe(renderConfigReference());
  });

  it('lists array items, environment variables and the keys touched first', () => {
    const keys = new Map(configKeys().map((key) => [key.path, key]));
    expect(keys.get('upstreams[i].url')).toMatchObject({ env: 'GATEWAY_UPSTREAMS_0_URL', first: true, section: 'upstreams' });
    expect(keys.get('cache.redisUrl')?.env).toBe('GATEWAY_CACHE_REDIS_URL, REDIS_URL');
    expect(keys.get('scopes.timeoutMs')).toMatchObject({ default: '3000', env: 'GATEWAY_SCOPES_TIMEOUT_MS', first: false });
    expect(keys.get('rateLimits.reads')?.type).toBe('{ points, durationMs, blockMs }');
    expect(keys.get('credentials.apiKeys[i].name')?.default).toBe('required');
  });

  it('names a key that lacks a description, a default, or has a description of several lines', () => {
    const schema = {
      type: 'object',
      properties: {
        a: { type: 'integer', default: 1 },
        b: { type: 'string', description: 'B.' },
        c: { type: 'string', description: 'first\nsecond', 'x-default': 'none' },
        d: { type: 'object', properties: { e: { type: 'boolean', default: false, description: 'E.' } } },
      },
    };
    expect(undocumentedKeys(configKeys(schema))).toEqual([
      'a: no description',
      'b: no default (a "default", or "x-default" text saying what absence means)',
      'c: the description is more than one line',
    ]);
  });
});
