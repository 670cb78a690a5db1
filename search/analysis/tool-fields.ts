/**
 * The searchable text of one tool, field by field: what the index (and the bench's BM25 baseline) reads.
 */
import { wordSpans } from './tokenize.ts';

/** A tool as the index takes it: a tools/list entry plus where it comes from. */
export type SearchableTool = {
  /** The name the caller knows the tool by (hits carry it back). */
  name: string;
  /** The tool's own name at its upstream, when `name` is an exposed one (`<upstream>__<name>`): the name
   *  field indexes this, so that the upstream's words (in their own field) do not count twice. */
  upstreamName?: string;
  title?: string;
  description?: string;
  inputSchema?: object;
  category?: string;
  upstream?: string;
  /** MCP tool annotations; `readOnlyHint` and `destructiveHint` tell reads from writes (search/analysis/intent.ts). */
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
  /** Search keywords and phrasings (the upstream's `_meta`, the gateway's config): a field of their own. */
  keywords?: readonly string[];
  /** The tool's outputSchema: the names of the records and fields it answers with are what it is about
   *  ("email", "timezone", "unrealized_pl"), a field of their own. */
  outputSchema?: object;
};

/** The text fields of a tool. `params` holds parameter names (nested ones too), `paramText` their
 *  descriptions, titles and enum values. */
export type ToolFields = {
  name: string;
  title: string;
  description: string;
  params: string;
  paramText: string;
  category: string;
  upstream: string;
  keywords: string;
  /** outputSchema property names (nested ones too) and their descriptions and titles. */
  output: string;
};

/** Field names in index order. */
export const FIELD_NAMES = ['name', 'title', 'description', 'params', 'paramText', 'category', 'upstream', 'keywords', 'output'] as const;
export type FieldName = (typeof FIELD_NAMES)[number];

/** A field the index can derive from the others: `summary`, the description's first paragraph. */
export const SUMMARY = 'summary';
/** Fields a tuning weighs: the tool's own and the derived one. */
export type WeightedField = FieldName | typeof SUMMARY;

/** A paragraph ends at a blank line. */
const PARAGRAPH_BREAK = /\n[ \t]*\n/;

/**
 * The first paragraph of a description: what most authors write first is what the tool does; usage notes,
 * argument lists and examples follow. A description of one paragraph is its own summary.
 */
export function summaryOf(description: string): string {
  const trimmed = description.trim();
  const m = PARAGRAPH_BREAK.exec(trimmed);
  return m === null ? trimmed : trimmed.slice(0, m.index);
}

/** Schema keywords whose values are sub-schemas (objects or arrays of them). `properties` is handled apart
 *  because its keys are the parameter names. */
const SUBSCHEMA_KEYS = ['items', 'prefixItems', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'not', 'then', 'else', 'if'];
const SUBSCHEMA_ORDER = new Map(SUBSCHEMA_KEYS.map((key, i) => [key, i]));
/** Deep enough for real tool schemas; stops pathological ones from costing more than they are worth. */
const MAX_DEPTH = 8;

type Collected = { names: string[]; text: string[]; enums?: string[] };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function collectSchema(schema: unknown, out: Collected, depth: number): void {
  if (!isObject(schema) || depth > MAX_DEPTH) return;
  // The root's own description/title describe the tool, not a parameter; only its children count.
  if (depth > 0 && typeof schema.description === 'string') out.text.push(schema.description);
  if (depth > 0 && typeof schema.title === 'string') out.text.push(schema.title);
  if (Array.isArray(schema.enum)) {
    for (const value of schema.enum) {
      if (typeof value !== 'string') continue;
      out.text.push(value);
      out.enums?.push(value);
    }
  }
  if (isObject(schema.properties)) {
    for (const [name, sub] of Object.entries(schema.properties)) {
      out.names.push(name);
      collectSchema(sub, out, depth + 1);
    }
  }
  // The sub-schemas present, in SUBSCHEMA_KEYS order: most schemas have two or three keys, so reading
  // those beats looking up all ten keywords in each.
  let subs: unknown[] | undefined;
  for (const key in schema) {
    const at = SUBSCHEMA_ORDER.get(key);
    if (at !== undefined) (subs ??= [])[at] = schema[key];
  }
  if (subs === undefined) return;
  for (const sub of subs) {
    if (Array.isArray(sub)) for (const s of sub) collectSchema(s, out, depth + 1);
    else collectSchema(sub, out, depth + 1);
  }
}

/** Parameter names (nested properties included, duplicates kept once), their descriptive text (enum
 *  values included), and their string enum values apart (duplicates kept once). */
export function schemaText(inputSchema: object | undefined): { params: string[]; paramText: string; enums: string[] } {
  const out: Collected = { names: [], text: [], enums: [] };
  collectSchema(inputSchema, out, 0);
  return { params: [...new Set(out.names)], paramText: out.text.join('\n'), enums: [...new Set(out.enums)] };
}

/** The searchable text of an outputSchema: its property names (nested ones too), then their texts. */
export function outputText(outputSchema: object | undefined): string {
  if (outputSchema === undefined) return '';
  const out: Collected = { names: [], text: [] };
  collectSchema(outputSchema, out, 0);
  return out.names.length + out.text.length === 0 ? '' : [...new Set(out.names)].join(' ') + (out.text.length > 0 ? `\n${out.text.join('\n')}` : '');
}

/** A sentence that gives the answer's shape in braces ("Returns {data, count}; page with limit/offset."). */
const SHAPE_NOTE = /(^|[.;:!?]\s+)Returns\s*\{[^}]*\}[^.\n]*(?:\.(?=\s|$)|$)/g;

/**
 * `description` without its shape notes: a sentence led by "Returns {...}" names the envelope every tool
 * of a server answers with (`data`, `count`), which the output field already holds, and its "returns"
 * made every tool match "compare the returns of my backtests".
 */
export function withoutShapeNotes(description: string): string {
  return description.includes('{') ? description.replace(SHAPE_NOTE, '$1') : description;
}

/** Upstream definitions are data from elsewhere: a field that is not a string indexes as empty. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The compound identifiers (other than the tool's own name) that mention stripping looked up: those it
 *  found in the catalogue's names and left out, and the others. The text stays right for another set of
 *  names while exactly the `stripped` ones are in it. */
export type Mentions = { stripped: string[]; kept: string[] };

/**
 * `text` without mentions of the other tools named in `toolNames` (`self` is kept). A description that points to a neighbour
 * ("use list_overlays to read the configuration first") says when NOT to pick this tool; indexing the
 * neighbour's name would make this tool match queries about the neighbour. `mentions`, when given,
 * collects the identifiers looked up. With `clauses`, the whole clause goes: a pointer ("Find the id with
 * list_webhooks", "For one run's full record use get_backtest_result", "past ones: list_risk_snapshots")
 * says what the other tool does, and its words ("full record", "past") are that tool's; a mention inside
 * parentheses takes the parenthesis only, otherwise its clause (`CLAUSE_END`) goes.
 */
export function withoutToolMentions(text: string, toolNames: ReadonlySet<string>, self: string, mentions?: Mentions, clauses = false): string {
  if (toolNames.size === 0 || text === '') return text;
  // Only compound names: a one-word tool name ("search", "fetch") is also an ordinary word.
  const spans: number[] = [];
  wordSpans(text, spans, false, true);
  const cuts: [number, number][] = [];
  for (let k = 0; k < spans.length; k += 2) {
    const word = text.slice(spans[k], spans[k + 1]);
    if (word === self) continue;
    if (!toolNames.has(word)) {
      mentions?.kept.push(word);
      continue;
    }
    mentions?.stripped.push(word);
    cuts.push(clauses ? clauseAround(text, spans[k], spans[k + 1]) : [spans[k], spans[k + 1]]);
  }
  if (cuts.length === 0) return text;
  let kept = '';
  let from = 0;
  for (const [start, end] of cuts) {
    if (end <= from) continue;
    kept += `${text.slice(from, Math.max(from, start))} `;
    from = end;
  }
  return kept + text.slice(from);
}

/** A clause ends at sentence punctuation followed by a space or the end, at a semicolon or a line break. */
const CLAUSE_END = /[.!?](?=\s|$)|[;\n]/g;

/** [start, end) of the parenthesis or clause around text[at, to). */
function clauseAround(text: string, at: number, to: number): [number, number] {
  const open = text.lastIndexOf('(', at);
  if (open >= 0 && text.lastIndexOf(')', at) < open) {
    const close = text.indexOf(')', to);
    if (close >= 0) return [open, close + 1];
  }
  let start = 0;
  CLAUSE_END.lastIndex = 0;
  for (let m = CLAUSE_END.exec(text); m !== null && m.index < at; m = CLAUSE_END.exec(text)) start = m.index + 1;
  CLAUSE_END.lastIndex = to;
  const m = CLAUSE_END.exec(text);
  return [start, m === null ? text.length : m.index + 1];
}

/**
 * Text fields of `tool` (see `ToolFields`). With `toolNames` (every name in the catalogue), mentions of
 * other tools are left out of the description and parameter text (and collected in `mentions`, when
 * given); `clauses`: the clauses mentioning them (see `withoutToolMentions`). `schema` is `schemaText` of the
 * tool's inputSchema, when the caller has it already.
 */
export function toolFields(
  tool: SearchableTool,
  toolNames?: ReadonlySet<string>,
  schema = schemaText(tool.inputSchema),
  mentions?: Mentions,
  clauses = false,
): ToolFields {
  const { params, paramText } = schema;
  const names = toolNames ?? new Set<string>();
  return {
    name: text(tool.upstreamName ?? tool.name),
    title: text(tool.title),
    description: withoutToolMentions(text(tool.description), names, tool.name, mentions, clauses),
    params: params.join(' '),
    paramText: withoutToolMentions(paramText, names, tool.name, mentions, clauses),
    category: text(tool.category),
    upstream: text(tool.upstream),
    keywords: Array.isArray(tool.keywords) ? tool.keywords.filter((k) => typeof k === 'string').join('\n') : '',
    output: outputText(tool.outputSchema),
  };
}
