/**
 * `mentionClauses` (search/tuning.ts): a clause pointing to another tool ("for one file's columns use
 * get_data_file") is that tool's text, left out of this one's.
 */
import { describe, expect, it } from 'vitest';

import { withoutToolMentions } from '../../../search/analysis/tool-fields.ts';

const names = new Set(['list_files', 'get_file', 'list_hooks']);

describe('mention clauses', () => {
  it('leaves out the clause or parenthesis that mentions another tool', () => {
    const text = "List uploaded files, newest first. Use get_file for one file's columns; page with limit. Returns {data}.";
    expect(withoutToolMentions(text, names, 'list_files', undefined, true)).toBe('List uploaded files, newest first.  page with limit. Returns {data}.');
    expect(withoutToolMentions('Remove a hook by its id (list_hooks finds it): deliveries stop.', names, 'delete_hook', undefined, true)).toBe(
      'Remove a hook by its id  : deliveries stop.',
    );
    // Without clauses, only the name goes.
    expect(withoutToolMentions(text, names, 'list_files')).toBe(
      "List uploaded files, newest first. Use   for one file's columns; page with limit. Returns {data}.",
    );
  });

  it('keeps text that mentions no other tool, and the tool itself', () => {
    expect(withoutToolMentions('See list_files for more.', names, 'list_files', undefined, true)).toBe('See list_files for more.');
    expect(withoutToolMentions('Plain text. No names', names, 'x', undefined, true)).toBe('Plain text. No names');
  });
});
