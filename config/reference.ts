/**
 * The configuration reference, docs/config.md, generated from config/schema.json so that the schema is
 * the one place a key is described. Every key (a leaf of the schema; array items expanded as `[i]`, a
 * shared shape such as a rate budget documented once) has a `description` of one line and a default: the
 * schema's `default`, or `x-default` (text) where absence itself means something (`publicUrl`: from the
 * Host header) or the key is required. `x-first: true` lists a key again in "The keys you touch first";
 * `x-env` names an extra environment variable (`REDIS_URL`, `OTEL_*`) besides the derived `GATEWAY_` one.
 *
 * CLI: `npm run docs:config` writes docs/config.md; `--check` exits 1 naming the fix when it is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import schema from './schema.json' with { type: 'json' };

interface SchemaNode {
  type?: string;
  enum?: unknown[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  $ref?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  description?: string;
  'x-default'?: string;
  'x-first'?: boolean;
  'x-env'?: string;
  required?: string[];
}

/** One documented key. `path` is dotted with `[i]` for array items; `section` is its top-level key. */
export interface ConfigKey {
  path: string;
  section: string;
  /** The derived variable (`GATEWAY_UPSTREAMS_0_URL`), then any `x-env` names. */
  env: string;
  /** The schema's default as JSON, or its `x-default` text; undefined when the schema gives neither. */
  default: string | undefined;
  description: string | undefined;
  /** `integer`, `integer 128-65536` (with its bounds), `string`, `one of a, b`, `{ points, durationMs }`, ... */
  type: string;
  first: boolean;
  required: boolean;
}

const definitions = schema.definitions as Record<string, SchemaNode>;
const here = dirname(fileURLToPath(import.meta.url));
export const REFERENCE_PATH = resolve(here, '../docs/config.md');

const definitionName = (node: SchemaNode) => node.$ref?.replace('#/definitions/', '');
const deref = (node: SchemaNode): SchemaNode => {
  const name = definitionName(node);
  return name ? { ...deref(definitions[name]!), ...node, $ref: undefined } : node;
};
const upperSnake = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** A shared object shape referenced by a property (a rate budget): one row, its fields in "Shapes". */
function isShape(node: SchemaNode): boolean {
  const name = definitionName(node);
  return name !== undefined && definitions[name]!.properties !== undefined;
}

function typeOf(node: SchemaNode): string {
  if (isShape(node)) return `{ ${Object.keys(definitions[definitionName(node)!]!.properties!).join(', ')} }`;
  const resolved = deref(node);
  if (resolved.enum) return `one of ${resolved.enum.join(', ')}`;
  if (resolved.type === 'array') return `array of ${resolved.items ? (deref(resolved.items).type ?? 'object') : 'any'}`;
  if (resolved.type === 'object') return 'map';
  return `${resolved.type ?? 'any'}${bounds(resolved)}`;
}

/** A number's bounds as the loader enforces them: ` 128-65536`, ` >= 1`, ` <= 10`, or nothing. */
function bounds(node: SchemaNode): string {
  const { minimum: low, maximum: high } = node;
  if (low !== undefined && high !== undefined) return ` ${low}-${high}`;
  if (low !== undefined) return ` >= ${low}`;
  return high !== undefined ? ` <= ${high}` : '';
}

/** Every documented key of `root`, in schema order. */
export function configKeys(root: SchemaNode = schema as SchemaNode): ConfigKey[] {
  const keys: ConfigKey[] = [];
  // Array items are expanded in place (`upstreams[i].url`) even when they are a shared shape.
  const walk = (node: SchemaNode, path: string, env: string, requiredHere: boolean, item = false) => {
    const resolved = deref(node);
    if ((item || !isShape(node)) && resolved.type === 'object' && resolved.properties) {
      for (const [name, child] of Object.entries(resolved.properties)) {
        walk(child, path ? `${path}.${name}` : name, `${env}_${upperSnake(name)}`, resolved.required?.includes(name) ?? false);
      }
      return;
    }
    const items = resolved.items && deref(resolved.items);
    if (resolved.type === 'array' && items?.type === 'object' && items.properties) {
      walk(resolved.items!, `${path}[i]`, `${env}_0`, false, true);
      return;
    }
    keys.push({
      path,
      section: path.split(/[.[]/)[0]!,
      env: [`GATEWAY${env}`, ...(node['x-env'] ? [node['x-env']] : [])].join(', '),
      default: 'default' in node ? JSON.stringify(node.default) : (node['x-default'] ?? (requiredHere ? 'required' : undefined)),
      description: node.description,
      type: typeOf(node),
      first: node['x-first'] === true,
      required: requiredHere,
    });
  };
  walk(root, '', '', false);
  return keys;
}

/** What is wrong with the schema's documentation of its keys (empty when every key is documented). */
export function undocumentedKeys(keys: ConfigKey[] = configKeys()): string[] {
  return keys.flatMap((key) => [
    ...(key.description === undefined ? [`${key.path}: no description`] : []),
    ...(key.description?.includes('\n') ? [`${key.path}: the description is more than one line`] : []),
    ...(key.default === undefined ? [`${key.path}: no default (a "default", or "x-default" text saying what absence means)`] : []),
  ]);
}

/** Markdown table cell text: pipes escaped, `<` kept from reading as HTML. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/</g, '&lt;');
const code = (text: string) => `\`${text}\``;

/** A schema default (JSON) as code, a string without its quotes; `x-default` text as it is. */
function defaultCell(value: string | undefined): string {
  if (value === undefined) return '';
  return /^["[{\d]|^true$|^false$/.test(value) ? code(value.replace(/^"(.*)"$/, '$1')) : cell(value);
}

function row(key: ConfigKey): string {
  const envs = key.env.split(', ').map(code).join(', ');
  return `| \`${key.path}\` | ${cell(key.type)} | ${defaultCell(key.default)} | ${envs} | ${cell(key.description ?? '')} |`;
}

/** docs/config.md as it should read for `root`. */
export function renderConfigReference(root: SchemaNode = schema as SchemaNode): string {
  const keys = configKeys(root);
  const header = ['| key | type | default | environment | what it does |', '|---|---|---|---|---|'];
  const sections = [...new Set(keys.map((key) => key.section))];
  const shapes = Object.entries(definitions).filter(
    ([name, shape]) => shape.properties && keys.some((key) => key.type === typeOf({ $ref: `#/definitions/${name}` })),
  );
  return [
    '<!-- Generated by `npm run docs:config` from config/schema.json: edit the schema, not this file. -->',
    '# Configuration reference',
    '',
    `Every key of [config/schema.json](../config/schema.json) (${keys.length} keys), with its default and its`,
    "environment variable (`GATEWAY_` + the key path in UPPER_SNAKE, array elements by index). A variable's value",
    "is read as its key's type: numbers and booleans parsed, a list of strings as a comma-separated list",
    '(`GATEWAY_UPSTREAMS_0_ARGS=-y,server`) or JSON (`["-y","server"]`; one opening with `[` is JSON, refused when it does not parse), a map or any other list as JSON',
    '(`GATEWAY_UPSTREAMS_0_ENV={"ROOT":"/data"}`). How the file, the variables and `${VAR}` combine, and what',
    'each part does in depth: [config/README.md](../config/README.md).',
    '',
    '## The keys you touch first',
    '',
    ...header,
    ...keys.filter((key) => key.first).map(row),
    '',
    '## Every key, by section',
    ...sections.flatMap((section) => ['', `### \`${section}\``, '', ...header, ...keys.filter((key) => key.section === section).map(row)]),
    '',
    '## Shapes',
    ...shapes.flatMap(([name, shape]) => [
      '',
      `\`{ ${Object.keys(shape.properties!).join(', ')} }\` (${name}):`,
      '',
      ...Object.entries(shape.properties!).map(([field, node]) => `- \`${field}\` (${typeOf(node)}, required): ${node.description ?? ''}`),
    ]),
    '',
  ].join('\n');
}

function main(): void {
  const want = renderConfigReference();
  const problems = undocumentedKeys();
  if (problems.length > 0) {
    console.error(`config/schema.json: ${problems.length} key(s) not documented:\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  if (process.argv.includes('--check')) {
    const have = readFileSync(REFERENCE_PATH, 'utf8');
    if (have !== want) {
      console.error('docs/config.md is not what config/schema.json says: run `npm run docs:config`');
      process.exit(1);
    }
    return;
  }
  writeFileSync(REFERENCE_PATH, want);
  console.log(`wrote ${REFERENCE_PATH}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
