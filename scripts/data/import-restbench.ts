/**
 * Converts RestBench (the RestGPT repository, MIT: github.com/Yifan-Song793/RestGPT) into the project's
 * data/ formats: every operation of its TMDB and Spotify OpenAPI specs becomes one tool (name: the
 * operationId; title: the summary; description as the spec gives it; inputSchema from the parameters and
 * JSON request body; outputSchema from the 200 answer; readOnlyHint for GET) of the server `tmdb` or
 * `spotify`, and every task of datasets/{tmdb,spotify}.json one labelled query whose gold is the
 * operationIds of its solution path.
 *
 *   npx tsx scripts/data/import-restbench.ts <RestGPT checkout>
 *
 * writes data/catalogs/restbench-tools.json and data/queries/restbench-dev.jsonl.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const METHODS = ['get', 'post', 'put', 'delete', 'patch'];
/** How deep a referenced schema is followed: the names of an answer's fields and their children's. */
const MAX_DEPTH = 3;

const source = process.argv[2];
if (!source) throw new Error('usage: import-restbench.ts <RestGPT checkout>');
const root = resolve(import.meta.dirname, '../..');

function deref(spec: Json, value: unknown): unknown {
  let v = value;
  for (let hops = 0; isObject(v) && typeof v.$ref === 'string' && hops < 10; hops += 1) {
    const ref = v.$ref;
    v = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), spec);
  }
  return v;
}

/** A JSON Schema with references resolved up to `MAX_DEPTH` levels, examples and vendor keys left out. */
function schemaOf(spec: Json, value: unknown, depth = 0): Json {
  const s = deref(spec, value);
  if (!isObject(s)) return {};
  const out: Json = {};
  for (const key of ['type', 'description', 'title', 'enum', 'default', 'format']) if (s[key] !== undefined) out[key] = s[key];
  if (depth >= MAX_DEPTH) return out;
  if (isObject(s.properties)) {
    out.properties = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, schemaOf(spec, v, depth + 1)]));
  }
  if (s.items !== undefined) out.items = schemaOf(spec, s.items, depth + 1);
  for (const key of ['allOf', 'oneOf', 'anyOf']) {
    if (Array.isArray(s[key])) out[key] = (s[key] as unknown[]).map((x) => schemaOf(spec, x, depth + 1));
  }
  return out;
}

/** A solution step as looked up: path parameters unnamed (one task names `/person/{movie_id}/...`). */
function stepKey(step: string): string {
  return step.trim().replace(/\{[^}]*\}/g, '{}');
}

function tools(spec: Json, server: string, category: string): { tools: Json[]; byPath: Map<string, string> } {
  const out: Json[] = [];
  const byPath = new Map<string, string>();
  for (const [path, item] of Object.entries(spec.paths as Json)) {
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const name = String(op.operationId);
      const properties: Json = {};
      const required: string[] = [];
      for (const raw of [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
        const p = deref(spec, raw);
        if (!isObject(p) || typeof p.name !== 'string') continue;
        properties[p.name] = { ...schemaOf(spec, p.schema), ...(typeof p.description === 'string' ? { description: p.description } : {}) };
        if (p.required === true) required.push(p.name);
      }
      const body = deref(spec, op.requestBody);
      const bodySchema = isObject(body) && isObject(body.content) ? (body.content as Json)['application/json'] : undefined;
      if (isObject(bodySchema)) {
        const s = schemaOf(spec, bodySchema.schema);
        if (isObject(s.properties)) Object.assign(properties, s.properties);
      }
      const ok = isObject(op.responses) ? deref(spec, (op.responses as Json)['200'] ?? (op.responses as Json)['201']) : undefined;
      const okSchema = isObject(ok) && isObject(ok.content) ? (ok.content as Json)['application/json'] : undefined;
      const outputSchema = isObject(okSchema) ? schemaOf(spec, okSchema.schema) : undefined;
      out.push({
        server,
        server_key: server.toLowerCase(),
        category,
        name,
        ...(typeof op.summary === 'string' ? { title: op.summary.trim() } : {}),
        description: typeof op.description === 'string' ? op.description.trim() : '',
        inputSchema: { type: 'object', properties, ...(required.length > 0 ? { required: [...new Set(required)] } : {}) },
        ...(outputSchema && Object.keys(outputSchema).length > 0 ? { outputSchema } : {}),
        annotations: { readOnlyHint: method === 'get' },
      });
      byPath.set(stepKey(`${method.toUpperCase()} ${path}`), name);
    }
  }
  return { tools: out, byPath };
}

const catalog: Json[] = [];
const queries: string[] = [];
for (const [key, server, category] of [
  ['tmdb', 'TMDB', 'Movies'],
  ['spotify', 'Spotify', 'Music'],
] as const) {
  const spec = JSON.parse(readFileSync(resolve(source, `specs/${key}_oas.json`), 'utf8')) as Json;
  const made = tools(spec, server, category);
  catalog.push(...made.tools);
  const tasks = JSON.parse(readFileSync(resolve(source, `datasets/${key}.json`), 'utf8')) as { query: string; solution: string[] }[];
  tasks.forEach((task, i) => {
    const found = task.solution.map((s) => made.byPath.get(stepKey(s)));
    // A step naming no operation of the spec (a typo of the dataset's) is left out of the gold, said here.
    for (const [j, s] of task.solution.entries())
      if (found[j] === undefined) console.warn(`${key} task ${i + 1}: step ${JSON.stringify(s)} names no operation; left out`);
    const gold = [...new Set(found.filter((g): g is string => g !== undefined))];
    if (gold.length === 0) throw new Error(`${key} task ${i + 1}: no solution step names an operation`);
    queries.push(JSON.stringify({ id: `restbench-${key}-${i + 1}`, query: task.query.trim(), gold, category }));
  });
}
writeFileSync(resolve(root, 'data/catalogs/restbench-tools.json'), `${JSON.stringify(catalog, null, 1)}\n`);
writeFileSync(resolve(root, 'data/queries/restbench-dev.jsonl'), `${queries.join('\n')}\n`);
console.log(`${catalog.length} tools, ${queries.length} queries`);
