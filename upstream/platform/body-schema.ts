import { Ajv, type ErrorObject, type JSONSchemaType } from 'ajv';
import addFormats from 'ajv-formats';
import { HttpError } from './http-errors.ts';

// `optimize: false`: Ajv's optimiser would use up V8's shared hidden classes in this process (gateway/checks/schema-compiler.ts).
const ajv = new Ajv({ allErrors: false, strict: false, useDefaults: true, code: { optimize: false } });
addFormats.default(ajv);

/** The dotted path of the offending field in an ajv error (`targets.0.weight`, `quantity`). */
function fieldOf(error: ErrorObject): string {
  const base = error.instancePath.split('/').filter(Boolean);
  const child = error.params.missingProperty ?? error.params.additionalProperty;
  return [...base, ...(child ? [child] : [])].join('.') || '(body)';
}

/**
 * Compiles `schema` once; the returned function returns the body typed as `T` (defaults applied)
 * or throws a 400 `invalid_body` HttpError naming the field.
 */
export function bodyValidator<T>(schema: JSONSchemaType<T> | Record<string, unknown>): (body: unknown) => T {
  const validate = ajv.compile<T>(schema);
  return (body) => {
    if (validate(body)) return body;
    const error = validate.errors![0]!;
    const field = fieldOf(error);
    const detail = error.keyword === 'additionalProperties' ? 'is not a known field' : error.message;
    throw new HttpError(400, 'invalid_body', `${field} ${detail}`, field);
  };
}
