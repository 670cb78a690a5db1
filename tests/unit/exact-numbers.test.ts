/** Numbers JSON.parse does not read as written (gateway/checks/exact-numbers.ts): found with their path, the rest left alone. */
import { describe, expect, it } from 'vitest';
import { carriedExactly, describeInexactNumber, inexactNumber } from '../../gateway/checks/exact-numbers.ts';

describe('carriedExactly', () => {
  it('holds for every number a double carries, however it is written', () => {
    for (const literal of ['0', '-0', '0.000', '1.5', '-2', '9007199254740991', '1e300', '1E+300', '100000000000000000000', '0.1', '1e-7', '123.4560'])
      expect(carriedExactly(literal), literal).toBe(true);
  });
  it('fails for a rounded integer, a cut decimal, an overflow and an underflow', () => {
    for (const literal of ['9007199254740993', '12345678901234567890', '1.0000000000000001', '1e400', '-1e400', '1e-400'])
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
