/**
 * How tools become documents of the term index: one document per tool (numbered by its position in the
 * catalogue), one indexed field per text field, or a single weighted field for BM25F.
 *
 * A tool's document (its fields' terms, counted) depends on the tool, the tuning and, through mention
 * stripping, on which of the compound words in its text are names in the catalogue. A build can take the
 * documents of an earlier one (`Documents`): a tool passed again as the same object (tools are never
 * changed in place) whose mentions resolve the same way is not read again. The index comes out the same
 * as a build from scratch: documents are added in catalogue order either way, and new terms take their
 * place in the order first met.
 */
import { glossChinese, hasHan, type Glosses } from '../analysis/gloss.ts';
import { normaliseTerm } from '../analysis/terms.ts';
import {
  FIELD_NAMES,
  schemaText,
  SUMMARY,
  summaryOf,
  toolFields,
  withoutShapeNotes,
  type Mentions,
  type SearchableTool,
  type WeightedField,
} from '../analysis/tool-fields.ts';
import type { SearchTuning } from '../tuning.ts';
import { analysedLength, Int32List, TermIndexBuilder, type AnalysedTool, type TermDictionary } from './term-index-builder.ts';

/** The one field of a BM25F index: every field's text repeated by its weight (see `SearchTuning.fields`). */
export const COMBINED = 'text';

/**
 * The documents of one build, for the next: document `i` (in catalogue order) is the analysed tool at
 * `data[starts[i]...]` (`AnalysedTool` layout), with `params[i]` and, when mentions were stripped and
 * its text had compound words, `mentions[i]`.
 */
export type Documents = {
  /** What the documents depend on besides the tools (tuning knobs), as a string. */
  readonly key: string;
  /** The catalogue's names, when mentions were stripped. */
  readonly names?: ReadonlySet<string>;
  /** Each tool's document number. */
  readonly byTool: ReadonlyMap<SearchableTool, number>;
  readonly data: Int32Array;
  readonly starts: Int32Array;
  readonly params: readonly string[][];
  readonly mentions: readonly (Mentions | undefined)[];
  /** Documents read while their tool's Chinese text had no gloss (search/analysis/gloss.ts): read again. */
  readonly unglossed: ReadonlySet<number>;
  /** The term numbers the documents use, and how many terms the build that made them used. */
  readonly dictionary: TermDictionary;
  readonly termCount: number;
};

/** A dictionary that has grown past this many times the terms in use (catalogues that came and went)
 *  is dropped: the next build reads every tool again, into a fresh one. */
const DICTIONARY_SLACK = 2;

const WITH_SUMMARY: readonly WeightedField[] = [...FIELD_NAMES, SUMMARY];

/** Whether the index holds the derived summary field: only when something reads it (a lexical boost, or
 *  a weight in the semantic arm's matrix), since it repeats part of the description's postings. */
export function hasSummary(t: SearchTuning): boolean {
  return t.boosts.summary > 0 || (t.semantic === 'lsa' && (t.semanticFields.summary ?? 0) > 0);
}

/** The indexed fields, in index order (field number = position). */
export function indexedFields(t: SearchTuning): readonly (WeightedField | typeof COMBINED)[] {
  return t.fields === 'bm25f' ? [COMBINED] : hasSummary(t) ? WITH_SUMMARY : FIELD_NAMES;
}

/**
 * Turns tools into documents and indexes them: `add(id)` indexes tool `id` (in catalogue order, so that
 * an async build can pause between tools) and returns its parameter names. Mentions of other tools are
 * left out when the tuning says so; Chinese text also indexes as its `glosses`. `previous`: an earlier build's documents to take over (see the module
 * docstring); `documents()` gives this build's, once every tool is added.
 */
export function documentIndexer(
  tools: SearchableTool[],
  t: SearchTuning,
  glosses: Glosses,
  previous?: Documents,
): { add(id: number): string[]; builder: TermIndexBuilder; documents(): Documents } {
  const names = t.stripToolMentions ? new Set(tools.map((tool) => tool.name)) : undefined;
  const key = documentKey(t);
  const fieldCount = indexedFields(t).length;
  const reusable = previous?.key === key && previous.dictionary.terms.length <= DICTIONARY_SLACK * Math.max(previous.termCount, 10_000) ? previous : undefined;
  // A tool's rarity of a term ('tool' idf) counts its prose, not the identifiers of its schemas: output
  // and parameter names such as created_at would make "create" look common.
  const idfFields = indexedFields(t).map((f) => f !== 'output' && f !== 'params');
  const builder = new TermIndexBuilder(
    tools.length,
    fieldCount,
    (term) => normaliseTerm(term, t.stem, t.stemFold),
    { ...t.bm25, idfFields },
    reusable?.dictionary,
  );
  // With the same names, every document's mentions resolve as before: nothing to check per tool.
  const sameNames = reusable !== undefined && sameSet(reusable.names, names);
  const byTool = new Map<SearchableTool, number>();
  const data = new Int32List(reusable?.data.length ?? tools.length * 64);
  const starts = new Int32Array(tools.length);
  const params: string[][] = [];
  const mentions: (Mentions | undefined)[] = [];
  const unglossed = new Set<number>();
  let readUnglossed = false;
  const summarised = hasSummary(t) || t.repeats.summary > 0;
  const order = indexedFields(t);

  /** Whether an earlier document still reads its tool right: its mentions resolve as they did. */
  function stillRight(m: Mentions | undefined): boolean {
    if (names === undefined || sameNames) return true;
    return m === undefined || (m.stripped.every((n) => names.has(n)) && !m.kept.some((n) => names.has(n)));
  }

  function read(tool: SearchableTool): { analysed: AnalysedTool; params: string[]; mentions?: Mentions } {
    const schema = schemaText(tool.inputSchema);
    const found: Mentions | undefined = names ? { stripped: [], kept: [] } : undefined;
    const fields = toolFields(tool, names, schema, found, t.mentionClauses) as Record<WeightedField, string>;
    if (t.dropShapeNotes) fields.description = withoutShapeNotes(fields.description);
    // Enum values name what a tool acts on ("order.filled", "backtest.completed", "mean_reversion"), as
    // parameter names do: weighed like them too (they stay in the parameter text).
    if (t.enumsAsParams && schema.enums.length > 0) fields.params += ` ${schema.enums.join(' ')}`;
    fields.summary = summarised ? summaryOf(fields.description) : '';
    readUnglossed = false;
    if (t.gloss) {
      // Chinese text also indexes as its English glosses (search/analysis/gloss.ts), in the same field.
      const rawDescription = typeof tool.description === 'string' ? tool.description : '';
      const description = glossChinese(rawDescription, glosses);
      if (description !== '') fields.description += `\n${description}`;
      const rawSummary = summaryOf(rawDescription);
      const summary = summarised ? glossChinese(rawSummary, glosses) : '';
      if (summary !== '') fields.summary += `\n${summary}`;
      const paramText = glossChinese(schema.paramText, glosses);
      if (paramText !== '') fields.paramText += `\n${paramText}`;
      readUnglossed =
        (hasHan(rawDescription) && description === '') ||
        (hasHan(schema.paramText) && paramText === '') ||
        (summarised && hasHan(rawSummary) && summary === '');
    }
    // Repeating a field's text w times adds w x its term frequencies and length: BM25F's weighted sums.
    const texts =
      t.fields === 'bm25f'
        ? [WITH_SUMMARY.flatMap((f) => Array<string>(Math.max(0, Math.round(t.repeats[f]))).fill(fields[f])).join('\n')]
        : order.map((f) => fields[f as WeightedField]);
    const hasMentions = found !== undefined && found.stripped.length + found.kept.length > 0;
    return { analysed: builder.analyse(texts), params: schema.params, ...(hasMentions ? { mentions: found } : {}) };
  }

  return {
    builder,
    add(id) {
      const tool = tools[id];
      const earlier = reusable?.byTool.get(tool);
      let doc: { analysed: AnalysedTool; params: string[]; mentions?: Mentions };
      if (earlier !== undefined && stillRight(reusable!.mentions[earlier]) && !reusable!.unglossed.has(earlier)) {
        const start = reusable!.starts[earlier];
        const analysed = reusable!.data.subarray(start, start + analysedLength(reusable!.data, fieldCount, start));
        doc = { analysed, params: reusable!.params[earlier], mentions: reusable!.mentions[earlier] };
      } else doc = read(tool);
      builder.addAnalysed(doc.analysed);
      starts[id] = data.length;
      data.grow(data.length + doc.analysed.length);
      data.array.set(doc.analysed, data.length);
      data.length += doc.analysed.length;
      byTool.set(tool, id);
      params.push(doc.params);
      mentions.push(doc.mentions);
      if (readUnglossed) unglossed.add(id);
      readUnglossed = false;
      return doc.params;
    },
    documents: () => ({
      key,
      names,
      byTool,
      data: data.array.slice(0, data.length),
      starts,
      params,
      mentions,
      unglossed,
      dictionary: builder.dictionary,
      termCount: builder.termCount,
    }),
  };
}

/** The tuning knobs a document depends on. */
function documentKey(t: SearchTuning): string {
  return JSON.stringify([
    t.fields,
    t.fields === 'bm25f' ? t.repeats : null,
    indexedFields(t).length,
    t.stem,
    t.stemFold,
    t.stripToolMentions,
    t.mentionClauses,
    t.gloss,
    t.dropShapeNotes,
    t.enumsAsParams,
  ]);
}

function sameSet(a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.size !== b.size) return false;
  for (const x of b) if (!a.has(x)) return false;
  return true;
}
