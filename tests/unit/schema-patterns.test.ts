/**
 * JSON Schema `pattern`s run on RE2 (checks/schema-compiler.ts), in time linear in the input, and mean
 * what ECMA-262 says they mean (JSON Schema 2020-12 §6.4): `\s`, `\S` and `.` as ECMA reads them, a
 * named backreference refused rather than read as letters, a catastrophic pattern answered at once.
 */
import { describe, expect, it } from 'vitest';
import { SchemaCompiler } from '../../gateway/checks/schema-compiler.ts';

const compiler = new SchemaCompiler();
let key = 0;
/** Whether `value` passes `{ type: string, pattern }`, or the compile error, or why the pattern is left unchecked. */
function check(pattern: string, value: string): boolean | string {
  const { entry } = compiler.compile(`p${key++}`, { type: 'string', pattern });
  return 'compileError' in entry ? entry.compileError : (entry.unchecked?.[0] ?? entry.validate(value) === true);
}

describe('schema patterns', () => {
  it('read \\s, \\S and . as ECMA-262 does (RE2 alone: ASCII white space, a dot that takes \\r and U+2028)', () => {
    expect(check('^\\S+$', 'a\u00a0b')).toBe(false);
    expect(check('^\\S+$', 'ab')).toBe(true);
    expect(check('^\\s$', '\u00a0')).toBe(true);
    expect(check('^[\\s]$', '\u3000')).toBe(true);
    expect(check('^[\\S]+$', 'a\u00a0b')).toBe(false);
    expect(check('^[\\S]+$', 'a\u{1f600}b')).toBe(true);
    expect(check('^[^\\S]$', '\u3000')).toBe(true);
    expect(check('^.*$', 'a\rb')).toBe(false);
    expect(check('^.*$', 'a\u2028b')).toBe(false);
    expect(check('^a.c$', 'abc')).toBe(true);
    expect(check('^[.]$', '.')).toBe(true);
    expect(check('^[.]$', 'x')).toBe(false);
    expect(check('^\\.$', 'x')).toBe(false);
  });

  it('leave a named backreference, which RE2 has not, unchecked and say so, instead of reading it as the letters k<name>', () => {
    expect(check(`^(?<q>["']).*\\k<q>$`, '"abc"')).toMatch(/^pattern .* cannot be checked: named backreferences are not supported/);
  });

  it('check the rest of a schema whose pattern RE2 cannot run: one lookahead switched off every check of it (adversarial-upstream try-out)', () => {
    const schema = { type: 'object', properties: { n: { type: 'number' }, s: { type: 'string', pattern: '(?=x)x' } }, required: ['n'] };
    const { entry } = compiler.compile(`p${key++}`, schema);
    if ('compileError' in entry) throw new Error(entry.compileError);
    expect(entry.unchecked).toEqual([expect.stringMatching(/^pattern "\(\?=x\)x" cannot be checked/)]);
    expect(entry.validate({ n: 'NOT A NUMBER' })).toBe(false);
    expect(entry.validate({ n: 1, s: 'anything' })).toBe(true);
    // Ajv compiles a pattern once per engine: a second schema with it is still told.
    const again = compiler.compile(`p${key++}`, { type: 'string', pattern: '(?=x)x' }).entry;
    expect('unchecked' in again && again.unchecked).toEqual([expect.stringMatching(/cannot be checked/)]);
  });

  it('leave the whole schema unchecked where matching everything would refuse what it accepts (not, oneOf, if, a patternProperties name): review', () => {
    const compileErrorOf = (schema: Record<string, unknown>) => {
      const { entry } = compiler.compile(`p${key++}`, schema);
      return 'compileError' in entry ? entry.compileError : undefined;
    };
    expect(compileErrorOf({ type: 'string', not: { pattern: '^(?=.*forbidden)' } })).toMatch(/cannot be checked/);
    expect(
      compileErrorOf({
        oneOf: [
          { type: 'string', pattern: '^(?=.*@)' },
          { type: 'string', pattern: '^(?!.*@)' },
        ],
      }),
    ).toMatch(/cannot be checked/);
    expect(compileErrorOf({ type: 'object', patternProperties: { '^(?!x_)': { type: 'string' } }, properties: { x_count: { type: 'number' } } })).toMatch(
      /cannot be checked/,
    );
    expect(compileErrorOf({ if: { properties: { id: { pattern: '^(?=ord_)' } } }, then: { required: ['amount'] } })).toMatch(/cannot be checked/);
    // Data is no schema: a `pattern` inside `const` or `default` is never read as one.
    expect(compileErrorOf({ type: 'object', default: { pattern: '(?=x)' }, properties: { a: { type: 'string', pattern: '^a$' } } })).toBeUndefined();
  });

  it("keep one schema's unrunnable pattern from standing for another's runnable one (Ajv keys compiled patterns by their text): review", () => {
    const validateOf = (schema: Record<string, unknown>) => {
      const { entry } = compiler.compile(`p${key++}`, schema);
      if ('compileError' in entry) throw new Error(entry.compileError);
      return entry.validate;
    };
    // `[object Object]` is a runnable character class; an unrunnable pattern's key must never be it.
    expect(validateOf({ type: 'string', pattern: '[object Object]' })('zzz')).toBe(false);
    expect(validateOf({ type: 'string', pattern: '^(?=\\d)\\d+$' })('123')).toBe(true);
    expect(validateOf({ type: 'string', pattern: '[object Object]' })('zzz')).toBe(false);
  });

  it('answer a backtracking pattern at once: ^(a+)+$ against 10,000 characters and one more', () => {
    expect(check('^(a+)+$', `${'a'.repeat(10_000)}!`)).toBe(false);
    expect(check('^(a+)+$', 'a'.repeat(10_000))).toBe(true);
  });
});
