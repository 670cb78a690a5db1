/**
 * A deterministic value valid against a JSON Schema, for the replay upstream's structuredContent.
 * Covers what tool output schemas use: type (and type arrays), const, enum, default, properties with
 * required, additionalProperties, items/prefixItems with minItems, anyOf/oneOf (first branch), allOf
 * (merged), string minLength and common formats, numeric minimum/maximum/exclusive bounds/multipleOf.
 * `$ref` is not resolved (a `$ref`-only subschema yields null): tool output schemas are self-contained
 * in practice.
 */
type Schema = Record<string, unknown>;

const MAX_DEPTH = 12;

const FORMATS: Record<string, string> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  email: 'replay@example.com',
  uri: 'https://example.com/replay',
  'uri-reference': 'https://example.com/replay',
  url: 'https://example.com/replay',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '::1',
};

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function merged(schema: Schema): Schema {
  if (!Array.isArray(schema.allOf)) return schema;
  const out: Schema = { ...schema, allOf: undefined };
  for (const part of schema.allOf) {
    if (!isObject(part)) continue;
    const m = merged(part);
    out.properties = { ...(out.properties as Schema | undefined), ...(m.properties as Schema | undefined) };
    out.required = [...new Set([...((out.required as string[]) ?? []), ...((m.required as string[]) ?? [])])];
    for (const [k, v] of Object.entries(m)) if (!(k in out) || out[k] === undefined) out[k] = v;
  }
  return out;
}

function typeOf(schema: Schema): string | undefined {
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return (schema.type as string[]).find((t) => t !== 'null') ?? 'null';
  if (isObject(schema.properties)) return 'object';
  if (schema.items !== undefined) return 'array';
  return undefined;
}

function sampleNumber(schema: Schema, integer: boolean): number {
  const min =
    typeof schema.minimum === 'number'
      ? schema.minimum
      : typeof schema.exclusiveMinimum === 'number'
        ? schema.exclusiveMinimum + (integer ? 1 : 0.5)
        : undefined;
  const max =
    typeof schema.maximum === 'number'
      ? schema.maximum
      : typeof schema.exclusiveMaximum === 'number'
        ? schema.exclusiveMaximum - (integer ? 1 : 0.5)
        : undefined;
  let n = min ?? (max !== undefined ? Math.min(0, max) : 0);
  if (integer) n = Math.ceil(n);
  if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0) n = Math.ceil(n / schema.multipleOf) * schema.multipleOf;
  return n;
}

/** A value valid against `schema` (see module docstring for what is covered). */
export function sampleValue(schema: unknown, depth = 0): unknown {
  if (schema === true || !isObject(schema) || depth > MAX_DEPTH) return null;
  const s = merged(schema);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ('default' in s) return s.default;
  const branch = Array.isArray(s.anyOf) ? s.anyOf[0] : Array.isArray(s.oneOf) ? s.oneOf[0] : undefined;
  if (branch !== undefined && typeOf(s) === undefined) return sampleValue(branch, depth + 1);
  switch (typeOf(s)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = isObject(s.properties) ? s.properties : {};
      const required = Array.isArray(s.required) ? (s.required as string[]) : [];
      for (const key of required) out[key] = sampleValue(props[key] ?? (isObject(s.additionalProperties) ? s.additionalProperties : {}), depth + 1);
      return out;
    }
    case 'array': {
      const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : [];
      const min = typeof s.minItems === 'number' ? s.minItems : 0;
      const items: unknown[] = prefix.map((p) => sampleValue(p, depth + 1));
      while (items.length < min) items.push(sampleValue(s.items ?? {}, depth + 1));
      return items;
    }
    case 'string': {
      const base = (typeof s.format === 'string' && FORMATS[s.format]) || 'replay';
      const min = typeof s.minLength === 'number' ? s.minLength : 0;
      return base.length >= min ? base : base.padEnd(min, 'x');
    }
    case 'integer':
      return sampleNumber(s, true);
    case 'number':
      return sampleNumber(s, false);
    case 'boolean':
      return false;
    default:
      return null;
  }
}
