import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so equal content always serialises (and hashes) the same; `indent` spaces for people to read. */
export function stableStringify(value: unknown, indent?: number): string {
  return JSON.stringify(value, sortedKeys, indent) ?? 'null';
}

/**
 * `JSON.stringify` replacer: each object as a copy with its keys inserted in sorted order (the object
 * itself when they already are), so the native serialiser does the rest (about twice as fast as
 * serialising in JS). Integer-like keys ("2", "10") come first in numeric order, as JS enumerates them
 * in every object whatever the insertion order: the output still depends on the content only.
 */
function sortedKeys(this: unknown, _key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i += 1) sorted = keys[i - 1]! < keys[i]!;
  if (sorted) return value;
  // No prototype: an own `__proto__` key (JSON.parse makes one) is copied as a key, not set as the copy's prototype.
  const copy: Record<string, unknown> = Object.create(null);
  for (const key of keys.sort()) copy[key] = (value as Record<string, unknown>)[key];
  return copy;
}

/** Hex SHA-256 of the stable serialisation: the identity of a schema, a catalogue version. */
export function contentHash(value: unknown): string {
  return sizedContentHash(value).hash;
}

/** {@link contentHash} and the length of the serialisation it hashed (UTF-16 code units: about its bytes). */
export function sizedContentHash(value: unknown): { hash: string; length: number } {
  const text = stableStringify(value);
  return { hash: createHash('sha256').update(text).digest('hex'), length: text.length };
}
