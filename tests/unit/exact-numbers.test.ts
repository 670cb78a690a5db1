/** Numbers JSON.parse does not read as written (gateway/checks/exact-numbers.ts): found with their path, the rest left alone. */
import { describe, expect, it } from 'vitest';
import { carriedExactly, describeInexactNumber, inexactNumber } from '../../gateway/checks/exact-numbers.ts';

describe('carriedExactly', () => {
  it('holds for every number a double carries, however it is written', () => {
    for (const literal of ['0', '-0', '0.000', '1.5', '-2', '9007199254740991', '1e300', '1E+300', '100000000000000000000', '0.1', '1e-7', '123.4560'])
      expect(carriedExactly(literal), literal).toBe(true);
  });
  it('fails for a rounded integer, a cut decimal, an overflow and an underflow', () => {
    for (const literal of ['9007199254740993', '12345678901234567890', '1.0000000000000001', '123456789.0123456789', '1e400', '-1e400', '1e-400'])
      expect(carriedExactly(literal), literal).toBe(false);
  });
});

describe('inexactNumber', () => {
  it('names the first inexact number by JSON Pointer, with what it would become', () => {
    const found = inexactNumber('{"params":{"arguments":{"ok":[1e300,2],"a/b":[0,12345678901234567890]}}}');
    expect(found).toEqual({ path: ['params', 'arguments', 'a/b', 1], literal: '12345678901234567890', read: '12345678901234567000' });
    expect(describeInexactNumber(found!)).toBe(
      '/params/arguments/a~1b/1 is 12345678901234567890, a number JSON.parse reads as 12345678901234567000: send it as a string',
    );
    expect(describeInexactNumber(inexactNumber('{"x":-1e400}')!)).toBe(
      '/x is -1e400, a number JSON.parse reads as -Infinity (sent on as null): send it as a string',
    );
  });
  it('leaves exact numbers, numbers in strings, ids and progress tokens alone (the classifier refuses unsafe ids)', () => {
    expect(inexactNumber('{"a":"12345678901234567890","b":1e300,"c":100000000000000000000}')).toBeUndefined();
    expect(
      inexactNumber('{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping","params":{"_meta":{"progressToken":12345678901234567890}}}'),
    ).toBeUndefined();
    expect(inexactNumber('[{"id":12345678901234567890},{"params":{"n":12345678901234567890}}]')?.path).toEqual([1, 'params', 'n']);
  });
});

describe('inexactNumber on bodies JSON.parse takes', () => {
  it('finds a decimal whose digits the point splits, and every literal under a duplicated key (an overridden one too)', () => {
    expect(inexactNumber('{"lat":123456789.0123456789}')?.path).toEqual(['lat']);
    expect(inexactNumber('{"n":1,"n":12345678901234567890,"z":1,"z":2}')?.path).toEqual(['n']);
    expect(inexactNumber('{"n":12345678901234567890,"n":1}')?.path).toEqual(['n']);
  });
  it('skips strings with escaped quotes and backslashes, and names a key with escapes as JSON.parse reads it', () => {
    expect(inexactNumber('{"a":"x\\\\\\"","n":12345678901234567890}')?.path).toEqual(['n']);
    expect(inexactNumber('{"k\\"ey":[0,{"\\u002f":1e400}]}')?.path).toEqual(['k"ey', 1, '/']);
    expect(inexactNumber('12345678901234567890')?.path).toEqual([]);
  });
  it('names a float id JSON.parse would read as an integer (the classifier sees only the integer)', () => {
    expect(inexactNumber('{"jsonrpc":"2.0","id":1.0000000000000001,"method":"ping"}')).toMatchObject({ path: ['id'], read: '1' });
  });
  it('reads 4,000 levels of nesting in one pass, and skips strings that only look like numbers', () => {
    const deep = `${'['.repeat(4000)}1e400${']'.repeat(4000)}`;
    expect(inexactNumber(deep)?.path).toHaveLength(4000);
    expect(
      inexactNumber(
        '{"id":"9b1de8e1-8e40-4b7e-9e12-1e400a000000","hash":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","n":"1234567890123456789"}',
      ),
    ).toBeUndefined();
  });
});
