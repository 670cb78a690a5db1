/**
 * The upstream -> caller error table (gateway/wire/error-translation.ts): 2026-07-28 callers never see
 * the codes their revision forbids (-32002, -32042; spec 2026-07-28 basic/index §Error Codes), 2025-era
 * callers see them unchanged, and everything outside the table passes through untouched.
 */
import { describe, expect, it } from 'vitest';
import { ERROR_TRANSLATIONS, translateUpstreamError } from '../../gateway/wire/error-translation.ts';

const notFound = { code: -32002, message: 'Resource not found', data: { uri: 'file:///nope.txt' } };
const urlRequired = {
  code: -32042,
  message: 'This request requires more information.',
  data: { elicitations: [{ mode: 'url', elicitationId: 'e-1', url: 'https://auth.example.com/connect', message: 'Connect your account' }] },
};
const modernCaps = { elicitation: { form: {}, url: {} } };

describe('translateUpstreamError', () => {
  it('turns -32002 into -32602 for a 2026-07-28 caller, keeping the message and the uri', () => {
    expect(translateUpstreamError(notFound, { era: 'modern', method: 'resources/read' })).toEqual({
      kind: 'error',
      translated: true,
      error: { code: -32602, message: 'Resource not found', data: { uri: 'file:///nope.txt', upstreamCode: -32002 } },
    });
  });

  it('relays -32002 and -32042 unchanged to a 2025-era caller', () => {
    for (const error of [notFound, urlRequired]) {
      expect(translateUpstreamError(error, { era: 'legacy', method: 'tools/call' })).toEqual({ kind: 'error', error, translated: false });
    }
  });

  it('turns -32042 into an InputRequiredResult of URL elicitations for a 2026-07-28 caller that declares elicitation.url', () => {
    const out = translateUpstreamError(urlRequired, { era: 'modern', method: 'tools/call', clientCapabilities: modernCaps });
    expect(out).toEqual({
      kind: 'input_required',
      result: {
        resultType: 'input_required',
        inputRequests: {
          'url-elicitation-1': {
            method: 'elicitation/create',
            params: { mode: 'url', url: 'https://auth.example.com/connect', message: 'Connect your account' },
          },
        },
      },
    });
  });

  it('answers -32021 naming elicitation.url when the 2026-07-28 caller cannot do URL elicitation', () => {
    const out = translateUpstreamError(urlRequired, { era: 'modern', method: 'tools/call', clientCapabilities: { elicitation: { form: {} } } });
    expect(out).toMatchObject({ kind: 'error', error: { code: -32021, data: { requiredCapabilities: { elicitation: { url: {} } } } } });
  });

  it('answers -32603 (never -32042) on a method that cannot carry input_required, or a -32042 without elicitations', () => {
    expect(translateUpstreamError(urlRequired, { era: 'modern', method: 'completion/complete', clientCapabilities: modernCaps })).toMatchObject({
      kind: 'error',
      error: { code: -32603 },
    });
    expect(
      translateUpstreamError(
        { code: -32042, message: 'x', data: { elicitations: 'no' } },
        { era: 'modern', method: 'tools/call', clientCapabilities: modernCaps },
      ),
    ).toMatchObject({ kind: 'error', error: { code: -32603 } });
  });

  it("turns the upstream's verdict on the gateway's own hop (-32020, -32022) into -32603 for every caller", () => {
    for (const era of ['modern', 'legacy'] as const) {
      for (const code of [-32020, -32022]) {
        const out = translateUpstreamError({ code, message: 'hop', data: { supported: ['2025-11-25'] } }, { era, method: 'tools/call' });
        expect(out).toMatchObject({ kind: 'error', translated: true, error: { code: -32603, data: { upstreamCode: code } } });
      }
    }
  });

  it('relays every other code unchanged, data included', () => {
    for (const code of [-32600, -32601, -32602, -32603, -32000, -32001, -32021, 1234]) {
      const error = { code, message: `m${code}`, data: { requiredCapabilities: { sampling: {} } } };
      for (const era of ['modern', 'legacy'] as const)
        expect(translateUpstreamError(error, { era, method: 'tools/call' })).toEqual({ kind: 'error', error, translated: false });
    }
  });

  it("gives a 2025-era caller -32002 for a 2026-07-28 upstream's resource not found (-32602 with data.uri on resources/read), data kept (protocol try-out)", () => {
    const notFound = { code: -32602, message: 'Resource not found: cpzai://guides/nope', data: { uri: 'cpzai://guides/nope' } };
    expect(translateUpstreamError(notFound, { era: 'legacy', method: 'resources/read' })).toEqual({
      kind: 'error',
      translated: true,
      error: { code: -32002, message: notFound.message, data: { uri: 'cpzai://guides/nope', upstreamCode: -32602 } },
    });
    // Not a not-found: another method, or no uri in data; and a 2026-07-28 caller keeps -32602.
    for (const [error, method] of [
      [notFound, 'tools/call'],
      [{ code: -32602, message: 'Invalid params: uri is required' }, 'resources/read'],
    ] as const)
      expect(translateUpstreamError(error, { era: 'legacy', method })).toEqual({ kind: 'error', error, translated: false });
    expect(translateUpstreamError(notFound, { era: 'modern', method: 'resources/read' })).toEqual({ kind: 'error', error: notFound, translated: false });
  });

  it('has one row per upstream code and caller era', () => {
    const keys = ERROR_TRANSLATIONS.map((r) => `${r.upstreamCode}/${r.callers}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});
