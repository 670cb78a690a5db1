/**
 * Copies config/schema.json into the Helm chart's values.schema.json (`npm run chart:schema`), so
 * `helm template` refuses a wrong-typed or unknown key under `config` exactly as the gateway would at
 * start-up: the configuration's root becomes `definitions.gatewayConfig` (the chart's `config` value
 * refers to it) and its own definitions keep their names beside it. The chart's part of the file is
 * written by hand; tests/tooling/chart-schema.test.ts fails when the copy is stale.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const VALUES_SCHEMA_PATH = fileURLToPath(new URL('../deploy/helm/mcp-gateway/values.schema.json', import.meta.url));
const CONFIG_SCHEMA_PATH = fileURLToPath(new URL('../config/schema.json', import.meta.url));

type Schema = Record<string, unknown> & { definitions?: Record<string, unknown> };

/** The definitions values.schema.json must hold: the gateway configuration's root and definitions. */
export function gatewayDefinitions(config: Schema = JSON.parse(readFileSync(CONFIG_SCHEMA_PATH, 'utf8'))): Record<string, unknown> {
  const { $schema: _schema, $id: _id, title: _title, definitions, ...root } = config;
  return { gatewayConfig: { ...root, description: 'The gateway configuration (config/schema.json).' }, ...definitions };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const values = JSON.parse(readFileSync(VALUES_SCHEMA_PATH, 'utf8')) as Schema;
  values.definitions = gatewayDefinitions();
  writeFileSync(VALUES_SCHEMA_PATH, `${JSON.stringify(values, null, 2)}\n`);
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL('../node_modules/@biomejs/biome/bin/biome', import.meta.url)), 'format', '--write', VALUES_SCHEMA_PATH],
    {
      stdio: 'inherit',
    },
  );
  process.stdout.write(`wrote ${VALUES_SCHEMA_PATH}\n`);
}
