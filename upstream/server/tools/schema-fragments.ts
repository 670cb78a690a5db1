import type { JsonSchema } from './tool-definition.ts';

/**
 * Reusable JSON Schema pieces for the tools' inputSchema and outputSchema (plain JSON Schema that
 * reads the same under draft-07 and 2020-12). Money is in minor units (cents) as decimal strings.
 */

export const uuid = (description: string): JsonSchema => ({ type: 'string', format: 'uuid', description });
export const text = (description: string, maxLength = 200): JsonSchema => ({ type: 'string', minLength: 1, maxLength, description });
export const oneOf = (values: readonly (string | number)[], description: string): JsonSchema => ({
  type: typeof values[0] === 'number' ? 'number' : 'string',
  enum: values,
  description,
});
export const flag = (description: string): JsonSchema => ({ type: 'boolean', description });
export const date = (description: string): JsonSchema => ({ type: 'string', format: 'date', description });
export const ticker = (description: string): JsonSchema => ({ type: 'string', pattern: '^[A-Za-z][A-Za-z0-9.]{0,9}$', description });

/** `limit` (1-100) and `offset` (>= 0) of every list tool. */
export function pagination(defaultLimit = 50): Record<string, JsonSchema> {
  return {
    limit: { type: 'integer', minimum: 1, maximum: 100, default: defaultLimit, description: `Page size, 1-100 (default ${defaultLimit}).` },
    offset: { type: 'integer', minimum: 0, default: 0, description: 'Records to skip, for the next page: previous offset + count.' },
  };
}

/** An object input schema that refuses unknown (misspelt) arguments. */
export function input(properties: Record<string, JsonSchema>, required: string[] = [], extra: JsonSchema = {}): JsonSchema {
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false, ...extra };
}

// Output schemas: types and required keys, additional properties allowed so the platform can add fields.
export const S = { type: 'string' } as const;
export const N = { type: 'number' } as const;
export const I = { type: 'integer' } as const;
export const B = { type: 'boolean' } as const;
export const NULLABLE_S = { type: ['string', 'null'] } as const;
export const MONEY = { type: 'string', pattern: '^-?[0-9]+$' } as const;
export const NULLABLE_MONEY = { type: ['string', 'null'], pattern: '^-?[0-9]+$' } as const;

/** An output record schema: every listed property is required. */
export function record(properties: Record<string, JsonSchema>, description?: string): JsonSchema {
  return { type: 'object', ...(description ? { description } : {}), properties, required: Object.keys(properties) };
}

/** `{ data: item[], count }`, count being the number of records on this page. */
export function listOutput(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: { data: { type: 'array', items: item }, count: { type: 'integer', minimum: 0, description: 'Records on this page.' } },
    required: ['data', 'count'],
  };
}

/** `{ data: item }`. */
export function recordOutput(item: JsonSchema): JsonSchema {
  return { type: 'object', properties: { data: item }, required: ['data'] };
}
