/**
 * wire/objects.ts `withFields`: the result of `{ ...base, ...fields }`, without the hidden class per object that the
 * spread gives once optimised on Node 20 (V8 11.3): the reason the request path builds such objects with it. Here, not
 * under tests/unit, because the hidden-class check needs a process of its own: in a worker shared with other files,
 * their Ajv compiles can use up the empty object's transitions (gateway/checks/schema-compiler.ts says what that does),
 * and then no object built from empty shares a class.
 */
import { setFlagsFromString } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { withFields } from '../../../gateway/wire/objects.ts';

setFlagsFromString('--allow-natives-syntax');
// Parsed after the flag is set: V8's own test of two objects' hidden classes, and its optimiser on demand.
const natives = new Function(
  'build',
  `const made = [];
   %PrepareFunctionForOptimization(build);
   made.push(build(1), build(2));
   %OptimizeFunctionOnNextCall(build);
   made.push(build(3), build(4));
   return { optimised: %ActiveTierIsTurbofan(build), shared: %HaveSameMap(made[2], made[3]) };`,
) as (build: (i: number) => object) => { optimised: boolean; shared: boolean };
setFlagsFromString('--no-allow-natives-syntax');

describe('withFields', () => {
  it('is the spread: own enumerable properties of both, in order, the later winning', () => {
    const base = { kind: 'key', headers: { a: '1' }, digest: 'd', account: 'old' };
    expect(withFields(base, { account: 'new', apiKey: 'ops' })).toStrictEqual({ ...base, account: 'new', apiKey: 'ops' });
    expect(Object.keys(withFields(base, { extra: 1, kind: 'bearer' }))).toEqual(['kind', 'headers', 'digest', 'account', 'extra']);
    expect(withFields(base, {})).not.toBe(base);
  });

  it('keeps an own __proto__ key a key, as the spread does, instead of setting the prototype (review)', () => {
    const parsed = JSON.parse('{"name":"t","__proto__":{"outputSchema":{"type":"object"}}}') as Record<string, unknown>;
    const out = withFields(parsed, { name: 'renamed' });
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe('{"name":"renamed","__proto__":{"outputSchema":{"type":"object"}}}');
  });

  it('gives objects built alike one hidden class in optimised code, where the spread gives each its own', () => {
    const credential = (i: number) => ({ kind: 'key', headers: {}, digest: `d${i}` });
    const spread = natives((i) => ({ ...credential(i), account: `a${i}` }));
    const assigned = natives((i) => withFields(credential(i), { account: `a${i}` }));
    // The spread's own classes are what the helper exists for (on Node 20); a Node that fixes them needs no helper, and
    // the helper must hold either way.
    expect(spread.optimised).toBe(true);
    expect(assigned).toEqual({ optimised: true, shared: true });
  });
});
