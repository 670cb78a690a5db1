/**
 * checks/schema-compiler.ts schemaShapeProblem: an outputSchema that an SDK v1 client's Ajv (draft-07,
 * validateSchema: false) cannot compile, which throws out of its listTools for the whole list, and nothing
 * that it compiles (a review found the first version, a draft-07 meta-schema check, refusing schemas it takes).
 */
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { schemaShapeProblem } from '../../gateway/checks/schema-compiler.ts';

/** The SDK v1 client's own Ajv (its validation/ajv-provider.js). */
function clientCompiles(schema: object): boolean {
  const ajv = new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true });
  addFormats.default(ajv);
  try {
    ajv.compile(schema);
    return true;
  } catch {
    return false;
  }
}

const o = (properties: object) => ({ type: 'object', properties });

describe('schemaShapeProblem', () => {
  it.each([
    ['a type that is no JSON type', o({ x: { type: 'strin' } }), '/properties/x/type'],
    ['a pattern that is no regular expression', o({ x: { type: 'string', pattern: '([a' } }), '/properties/x/pattern'],
    ['an escape the u flag refuses', o({ x: { type: 'string', pattern: '^[\\w\\@]+$' } }), '/properties/x/pattern'],
    ['a property named default with a bad pattern', o({ default: { type: 'string', pattern: '[\\w\\@]' } }), '/properties/default/pattern'],
    ['a bad type in tuple items', { type: 'array', items: [{ type: 'string' }, { type: 'bad' }] }, '/items/1/type'],
    ['a patternProperties key', { type: 'object', patternProperties: { '(': { type: 'string' } } }, '/patternProperties'],
  ])('refuses %s, as the client cannot compile it', (_what, schema, pointer) => {
    expect(clientCompiles(schema)).toBe(false);
    expect(schemaShapeProblem(schema)).toMatch(new RegExp(`^${pointer.replace(/[/]/g, '\\/')}: `));
  });

  it.each([
    ['a lookahead (RE2 cannot, the client can)', o({ x: { type: 'string', pattern: '(?=a)b' } })],
    ['a null description', o({ x: { type: 'string', description: null } })],
    ['examples that are no list', o({ x: { type: 'string', examples: 'x' } })],
    ['an empty allOf', { type: 'object', allOf: [] }],
    ['required twice', { type: 'object', required: ['a', 'a'] }],
    ['a negative minLength', o({ x: { type: 'string', minLength: -1 } })],
    ['a type listed twice', o({ x: { type: ['string', 'string'] } })],
    ['a pattern in example data', o({ x: { type: 'object', example: { pattern: '*.ts' } } })],
    ['a pattern under a vendor keyword', o({ x: { type: 'string', 'x-validation': { pattern: '(' } } })],
    ['an unreferenced bad definition', { type: 'object', $defs: { a: { type: 'bad' } } }],
    [
      'a 2020-12 schema with $ref',
      { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { a: { $ref: '#/$defs/x' } }, $defs: { x: {} } },
    ],
  ])('takes %s, as the client compiles it', (_what, schema) => {
    expect(clientCompiles(schema)).toBe(true);
    expect(schemaShapeProblem(schema)).toBeUndefined();
  });
});
