import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import { jsonPointer } from './json-pointer.ts';

/**
 * What Ajv runs for every `pattern`, `patternProperties` and `propertyNames` pattern: RE2 (re2js), whose
 * time is linear in the input. Schemas come from upstreams the gateway does not trust, and a backtracking
 * pattern such as `^(a+)+$` held the event loop (every caller, every route) for seconds at 30 characters of
 * input on V8's engine, doubling with each one more. ECMA-262 syntax is translated (`translateRegExp`).
 * A pattern RE2 cannot run (lookaround, backreferences) matches everything ({@link Unrunnable}); whether
 * that may stand for it, or its whole schema goes unchecked, is {@link patternProblems}'s to say.
 */
const linearRegExp = Object.assign(
  (pattern: string): RE2JS | Unrunnable => {
    try {
      return linearPattern(pattern);
    } catch {
      return new Unrunnable(pattern);
    }
  },
  { code: 'linearRegExp' },
);

/** `pattern` compiled for RE2 as ECMA-262 reads it. @throws when RE2 cannot run it (lookaround, backreferences). */
function linearPattern(pattern: string): RE2JS {
  return RE2JS.compile(RE2JS.translateRegExp(ecmaClasses(pattern)));
}

/**
 * A pattern RE2 cannot run, as Ajv holds it: it matches everything. Ajv keeps one compiled pattern per
 * `toString()` for every schema its engine compiles: the key must never be a runnable pattern's text, or
 * one upstream's pattern would stand for another's (review: a shared `[object Object]` did).
 */
class Unrunnable {
  constructor(private readonly pattern: string) {}
  test(): boolean {
    return true;
  }
  toString(): string {
    return `\u0000unrunnable:${this.pattern}`;
  }
}

/** Keywords under which a pattern that matches everything would refuse what the schema accepts (or decide a branch wrongly). */
const NEGATING = new Set(['not', 'oneOf', 'if', 'contains', '$defs', 'definitions']);

/**
 * The patterns of `schema` RE2 cannot run, each with why, read at schema positions only (the keywords of
 * {@link schemaShapeProblem}: never data such as `const` or `default`), and whether one sits where matching
 * everything would make the schema stricter than written: under `not`, `oneOf`, `if` or `contains`, as a
 * `patternProperties` name (every property must then match its subschema), or in `$defs`/`definitions`
 * (reached from anywhere by `$ref`). There the whole schema must go unchecked; elsewhere the pattern alone
 * (review: `not: {pattern: lookahead}` refused every string).
 */
function patternProblems(schema: unknown): { reasons: string[]; anywhereUnsafe: boolean } {
  const reasons: string[] = [];
  let anywhereUnsafe = false;
  const runnable = new Map<string, boolean>();
  const check = (pattern: string, unsafe: boolean) => {
    let ok = runnable.get(pattern);
    if (ok === undefined) {
      try {
        linearPattern(pattern);
        ok = true;
      } catch (error) {
        ok = false;
        reasons.push(
          `pattern ${JSON.stringify(pattern.slice(0, 200))} cannot be checked: ${(error as Error).message} (schema patterns run on RE2, in linear time: no lookaround or backreferences)`,
        );
      }
      runnable.set(pattern, ok);
    }
    if (!ok && unsafe) anywhereUnsafe = true;
  };
  const walk = (node: unknown, unsafe: boolean, depth: number): void => {
    if (depth > 64 || typeof node !== 'object' || node === null || Array.isArray(node)) return;
    const at = node as Record<string, unknown>;
    if (typeof at.pattern === 'string') check(at.pattern, unsafe);
    const under = (keyword: string) => unsafe || NEGATING.has(keyword);
    for (const keyword of ONE_SCHEMA) walk(at[keyword], under(keyword), depth + 1);
    for (const keyword of SCHEMA_LISTS) if (Array.isArray(at[keyword])) for (const item of at[keyword] as unknown[]) walk(item, under(keyword), depth + 1);
    for (const keyword of [...SCHEMA_MAPS, '$defs', 'definitions']) {
      const map = at[keyword];
      if (typeof map !== 'object' || map === null || Array.isArray(map)) continue;
      for (const [name, subschema] of Object.entries(map)) {
        if (keyword === 'patternProperties') check(name, true);
        walk(subschema, under(keyword), depth + 1);
      }
    }
  };
  walk(schema, false, 0);
  return { reasons, anywhereUnsafe };
}

type Dialect = '2020-12' | '2019-09' | 'draft-07';

/** ECMA-262 WhiteSpace and LineTerminator (§12.2, §12.3), the set `\s` matches there; RE2's `\s` is ASCII only. */
const ECMA_SPACE = '\\u0009\\u000a\\u000b\\u000c\\u000d\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/** Everything else, as ranges (a class cannot hold a negated class): what `\S` inside a class matches. */
const ECMA_NON_SPACE =
  '\\u0000-\\u0008\\u000e-\\u001f\\u0021-\\u009f\\u00a1-\\u167f\\u1681-\\u1fff\\u200b-\\u2027\\u202a-\\u202e\\u2030-\\u205e\\u2060-\\u2fff\\u3001-\\ufefe\\uff00-\\uffff\\u{10000}-\\u{10ffff}';

/**
 * `pattern` with what RE2 reads otherwise spelled out, so it matches what ECMA-262 says (the JSON Schema
 * `pattern` dialect, draft 2020-12 §6.4): `\s` and `\S`, in a class or not, as ECMA's white space and
 * line terminators; `.` outside a class as anything but a line terminator (RE2's `.`
 * takes `\r`, U+2028 and U+2029). A named backreference (`\k<name>`), which translateRegExp would turn
 * into the letters `k<name>`, throws: RE2 has none.
 */
function ecmaClasses(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      const next = pattern[i + 1]!;
      i += 1;
      if (next === 'k' && pattern[i + 1] === '<') throw new Error('named backreferences are not supported');
      if (next === 's') out += inClass ? ECMA_SPACE : `[${ECMA_SPACE}]`;
      else if (next === 'S') out += inClass ? ECMA_NON_SPACE : `[^${ECMA_SPACE}]`;
      else out += c + next;
      continue;
    }
    if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    out += !inClass && c === '.' ? '[^\\u000a\\u000d\\u2028\\u2029]' : c;
  }
  return out;
}

/**
 * A compiled schema, or why it could not be compiled (a value, never an exception). `unchecked`: why each of
 * its patterns RE2 cannot run is not checked (they match everything; the rest of the schema is checked).
 */
export type Compiled = { validate: ValidateFunction; unchecked?: string[] } | { compileError: string };

/**
 * JSON Schema validators compiled lazily, once per distinct schema: entries are keyed by the caller's
 * key (the schema's content hash), engines are created on first use per dialect. Dialect by `$schema`:
 * 2020-12 (also when absent, as the MCP spec's default dialect says), 2019-09, or draft-07/06.
 */
export class SchemaCompiler {
  private readonly compiled = new LRUCache<string, Compiled>({ max: 5000 });
  private readonly engines = new Map<Dialect, Ajv>();

  /** The validator for `schema` under `key`; `fresh` is true when this call compiled it (to log once). */
  compile(key: string, schema: Record<string, unknown>): { entry: Compiled; fresh: boolean } {
    const hit = this.compiled.get(key);
    if (hit) return { entry: hit, fresh: false };
    let entry: Compiled;
    try {
      const engine = this.engine(dialectOf(schema));
      if (typeof schema.$id === 'string' && engine.getSchema(schema.$id)) engine.removeSchema(schema.$id);
      const validate = engine.compile(schema);
      const patterns = patternProblems(schema);
      // Where matching everything would refuse what the schema accepts, nothing of it is checked (as any schema that does not compile).
      if (patterns.anywhereUnsafe) entry = { compileError: patterns.reasons.join('; ') };
      else entry = patterns.reasons.length ? { validate, unchecked: patterns.reasons } : { validate };
    } catch (error) {
      entry = { compileError: (error as Error).message };
    }
    this.compiled.set(key, entry);
    return { entry, fresh: true };
  }

  private engine(dialect: Dialect): Ajv {
    let engine = this.engines.get(dialect);
    if (!engine) {
      // `optimize: false`, here and for every Ajv in the gateway's process (config/load.ts, and the reference services
      // `npm start` runs beside it): Ajv's code optimiser counts the generated code's variable names (`err12`, `data3`,
      // ...) in objects that start empty, a new first key each, thousands per schema. V8 (Node 20) links at most 1,536
      // first keys to the empty object's hidden class; past that, an empty object given any other key gets a class of
      // its own, and so does every object built that way on each request after (measured: 3 to 53 new classes per
      // forwarded call, inline caches missing on each; `BENCH_MAPS=1 npx tsx bench/profile-call.ts`). Unoptimised
      // code validates the same; tests/in-process/hidden-classes.test.ts holds it.
      const options = { strict: false, allErrors: true, validateFormats: true, code: { regExp: linearRegExp, optimize: false } };
      engine = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
      addFormats.default(engine);
      this.engines.set(dialect, engine);
    }
    return engine;
  }
}

/** The JSON Schema type names (draft-07 §6.1.1, 2020-12 validation §6.1.1). */
const JSON_TYPES: ReadonlySet<string> = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);
/** Keywords whose value is one subschema. */
const ONE_SCHEMA = [
  'additionalProperties',
  'additionalItems',
  'items',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
];
/** Keywords whose value is a list of subschemas. */
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
/** Keywords whose value maps names to subschemas (not `$defs` or `definitions`: Ajv compiles those only where a `$ref` reaches them). */
const SCHEMA_MAPS = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies'];

/**
 * Why `schema` would not compile in the Ajv an SDK v1 client builds for every outputSchema of a tools/list
 * (draft-07, `strict: false`, `validateSchema: false`: a schema is compiled, not checked against the
 * meta-schema), as `<JSON Pointer in the schema>: <what is wrong>`; undefined when it compiles there. One that
 * does not (`"type": "strin"`, a `pattern` that `new RegExp(p, 'u')` refuses) throws out of `listTools` for
 * the whole list (a try-out's client died). Only these, the failures such a compile meets: read at schema
 * positions only (subschemas by keyword), never inside `const`, `enum`, `default`, `examples` or unknown
 * keywords, which hold data (a review found a data `pattern` refused). Undefined for anything else.
 */
export function schemaShapeProblem(schema: unknown): string | undefined {
  const path: string[] = [];
  const at = (key: string) => jsonPointer([...path, key]);
  const walk = (node: unknown): string | undefined => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    const record = node as Record<string, unknown>;
    const type = record.type;
    if (type !== undefined) {
      const types = Array.isArray(type) ? type : [type];
      if (types.some((t) => typeof t !== 'string' || !JSON_TYPES.has(t)))
        return `${at('type')}: must be a JSON type name or a list of them (${[...JSON_TYPES].join(', ')})`;
    }
    const patterns = typeof record.pattern === 'string' ? [record.pattern] : [];
    const patternProperties = record.patternProperties;
    if (typeof patternProperties === 'object' && patternProperties !== null && !Array.isArray(patternProperties))
      patterns.push(...Object.keys(patternProperties));
    for (const pattern of patterns) {
      try {
        new RegExp(pattern, 'u');
      } catch (error) {
        return `${at(pattern === record.pattern ? 'pattern' : 'patternProperties')}: is no regular expression (${(error as Error).message})`;
      }
    }
    const into = (key: string, child: unknown): string | undefined => {
      path.push(key);
      const found = walk(child);
      path.pop();
      return found;
    };
    for (const key of ONE_SCHEMA) {
      const found = into(key, record[key]);
      if (found) return found;
    }
    for (const key of SCHEMA_LISTS) {
      const list = record[key];
      if (!Array.isArray(list)) continue;
      path.push(key);
      for (let i = 0; i < list.length; i += 1) {
        const found = into(String(i), list[i]);
        if (found) {
          path.pop();
          return found;
        }
      }
      path.pop();
    }
    for (const key of SCHEMA_MAPS) {
      const map = record[key];
      if (typeof map !== 'object' || map === null || Array.isArray(map)) continue;
      path.push(key);
      for (const [name, child] of Object.entries(map)) {
        const found = into(name, child);
        if (found) {
          path.pop();
          return found;
        }
      }
      path.pop();
    }
    return undefined;
  };
  return walk(schema);
}

/** The dialect a schema declares; no `$schema` means 2020-12 (MCP 2026-07-28, basic §JSON Schema usage). */
function dialectOf(schema: Record<string, unknown>): Dialect {
  const declared = typeof schema.$schema === 'string' ? schema.$schema.replace(/#$/, '').replace(/^https?:\/\//, '') : undefined;
  if (declared === undefined || declared === 'json-schema.org/draft/2020-12/schema') return '2020-12';
  if (declared === 'json-schema.org/draft/2019-09/schema') return '2019-09';
  if (declared === 'json-schema.org/draft-07/schema' || declared === 'json-schema.org/draft-06/schema') return 'draft-07';
  throw new Error(`unsupported JSON Schema dialect ${String(schema.$schema).slice(0, 100)}`);
}

/** JSON Pointer (RFC 6901) of the failing value: the missing or unexpected property itself when there is one. */
export function pointerOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  const child = error.keyword === 'required' ? params.missingProperty : error.keyword === 'additionalProperties' ? params.additionalProperty : undefined;
  return typeof child === 'string' ? `${error.instancePath}${jsonPointer([child])}` : error.instancePath;
}
