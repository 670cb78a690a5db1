/**
 * How tools become documents of the term index: one document per tool (numbered by its position in the
 * catalogue), one indexed field per text field, or a single weighted field for BM25F.
 */
import { normaliseTerm } from './terms.ts';
import { TermIndexBuilder } from './term-index-builder.ts';
import { FIELD_NAMES, schemaText, toolFields, type FieldName, type SearchableTool } from './tool-fields.ts';
import type { SearchTuning } from './tuning.ts';

/** The one field of a BM25F index: every field's text repeated by its weight (see `SearchTuning.fields`). */
export const COMBINED = 'text';

/** The indexed fields, in index order (field number = position). */
export function indexedFields(t: SearchTuning): readonly (FieldName | typeof COMBINED)[] {
  return t.fields === 'bm25f' ? [COMBINED] : FIELD_NAMES;
}

/**
 * Turns tools into documents and indexes them: `add(id)` indexes tool `id` (in catalogue order, so that
 * an async build can pause between tools) and returns its parameter names. Mentions of other tools are
 * left out when the tuning says so.
 */
export function documentIndexer(tools: SearchableTool[], t: SearchTuning): { add(id: number): string[]; builder: TermIndexBuilder } {
  const names = t.stripToolMentions ? new Set(tools.map((tool) => tool.name)) : undefined;
  const builder = new TermIndexBuilder(tools.length, indexedFields(t).length, (term) => normaliseTerm(term, t.stem), t.bm25);
  return {
    builder,
    add(id) {
      const tool = tools[id];
      const schema = schemaText(tool.inputSchema);
      const fields = toolFields(tool, names, schema);
      // Repeating a field's text w times adds w x its term frequencies and length: BM25F's weighted sums.
      const texts =
        t.fields === 'bm25f'
          ? [FIELD_NAMES.flatMap((f) => Array<string>(Math.max(0, Math.round(t.repeats[f]))).fill(fields[f])).join('\n')]
          : FIELD_NAMES.map((f) => fields[f]);
      builder.add(texts);
      return schema.params;
    },
  };
}
