/** The structural input limits (gateway/checks/input-limits.ts): depth, string and array length, object members, where they broke. */
import { describe, expect, it } from 'vitest';
import { breachIsInParams, breachIsInToolArguments, describeBreach, findLimitBreach, formatPath } from '../../gateway/checks/input-limits.ts';

const limits = { jsonDepth: 4, stringLength: 8, arrayLength: 3, objectMembers: 4 };

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

describe('findLimitBreach', () => {
  it('accepts a value exactly at every limit', () => {
    expect(findLimitBreach({ a: { b: { c: ['12345678', 2, 3] } } }, limits)).toBeUndefined();
    expect(findLimitBreach(nested(4), limits)).toBeUndefined();
    expect(findLimitBreach('12345678', limits)).toBeUndefined();
    expect(findLimitBreach(null, limits)).toBeUndefined();
  });

  it('reports the first level past jsonDepth with its path', () => {
    expect(findLimitBreach({ a: { b: { c: { d: {} } } } }, limits)).toEqual({ limit: 'jsonDepth', max: 4, path: ['a', 'b', 'c', 'd'] });
    expect(findLimitBreach(nested(5), limits)).toEqual({ limit: 'jsonDepth', max: 4, path: [0, 0, 0, 0] });
  });

  it('walks 100,000 levels without recursion and stops at the limit', () => {
    const breach = findLimitBreach(nested(100_000), { ...limits, jsonDepth: 64 });
    expect(breach?.limit).toBe('jsonDepth');
    expect(breach?.path).toHaveLength(64);
  });

  it('reports long strings, long keys and long arrays', () => {
    expect(findLimitBreach({ a: ['ok', 'x'.repeat(9)] }, limits)).toEqual({ limit: 'stringLength', max: 8, path: ['a', 1] });
    expect(findLimitBreach({ ['k'.repeat(9)]: 1 }, limits)).toEqual({ limit: 'stringLength', max: 8, path: ['k'.repeat(9)] });
    expect(findLimitBreach({ list: [1, 2, 3, 4] }, limits)).toEqual({ limit: 'arrayLength', max: 3, path: ['list'] });
    expect(findLimitBreach([1, 2, 3, 4], limits)).toEqual({ limit: 'arrayLength', max: 3, path: [] });
  });

  it('reports an object with more members than objectMembers, before looking inside it', () => {
    expect(findLimitBreach({ a: 1, b: 2, c: 3, d: 4 }, limits)).toBeUndefined();
    expect(findLimitBreach({ args: { a: 1, b: 2, c: 3, d: 4, e: 'x'.repeat(9) } }, limits)).toEqual({ limit: 'objectMembers', max: 4, path: ['args'] });
    expect(describeBreach({ limit: 'objectMembers', max: 4, path: ['args'] })).toBe('an object with more members than limits.objectMembers (4) at /args');
  });

  it('reports the first breach in document order and prefixes a base path', () => {
    expect(findLimitBreach({ first: 'x'.repeat(9), second: [1, 2, 3, 4] }, limits)?.path).toEqual(['first']);
    expect(findLimitBreach({ q: 'x'.repeat(9) }, limits, ['params', 'arguments'])?.path).toEqual(['params', 'arguments', 'q']);
  });
});

describe('where a breach is', () => {
  it('tells params from envelope, and tool arguments from other params', () => {
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: { deep: nested(10) } } };
    const breach = findLimitBreach(call, { ...limits, stringLength: 64, jsonDepth: 6 })!;
    expect(breachIsInParams(breach)).toBe(true);
    expect(breachIsInToolArguments(call, breach)).toBe(true);
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { deep: nested(10) } } };
    const inMeta = findLimitBreach(list, { ...limits, stringLength: 64, jsonDepth: 6 })!;
    expect(breachIsInParams(inMeta)).toBe(true);
    expect(breachIsInToolArguments(list, inMeta)).toBe(false);
    const envelope = findLimitBreach({ jsonrpc: '2.0', id: 'x'.repeat(9), method: 'ping' }, limits)!;
    expect(breachIsInParams(envelope)).toBe(false);
  });

  it('names the limit, its value and a shortened path', () => {
    expect(describeBreach({ limit: 'jsonDepth', max: 64, path: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0] })).toBe(
      'JSON nesting deeper than limits.jsonDepth (64) at /0/0/0/0/0/0/0/0/…',
    );
    expect(formatPath(['params', 'arguments', 'items', 3])).toBe('/params/arguments/items/3');
    expect(formatPath(['a/b', 'c~d'])).toBe('/a~1b/c~0d');
    // A long key is shown in part: an over-long key is itself the breach, and would make the message the payload.
    expect(formatPath(['x'.repeat(50_000)])).toBe(`/${'x'.repeat(64)}…`);
    expect(formatPath([])).toBe('(root)');
  });
});
