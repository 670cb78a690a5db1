/**
 * The fast path's envelope check remembers verdicts (wire/requests.ts validEnvelope): a remembered
 * verdict is the SDK schema's verdict for that envelope, valid and invalid alike, whatever came before.
 */
import { describe, expect, it } from 'vitest';
import { plainRequest } from '../../gateway/wire/requests.ts';

const HEADERS = {
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'list_accounts',
};

function call(clientInfo: unknown, clientCapabilities: unknown): unknown {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: {
      name: 'list_accounts',
      arguments: {},
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': clientInfo,
        'io.modelcontextprotocol/clientCapabilities': clientCapabilities,
      },
    },
  };
}

describe('envelope verdict memo', () => {
  it('answers each envelope as the schema does, first time and remembered, interleaved', () => {
    const valid = call({ name: 'memo-client', version: '1.0.0' }, { roots: { listChanged: true } });
    const badVersion = call({ name: 'memo-client', version: 1 }, { roots: { listChanged: true } });
    const badCapabilities = call({ name: 'memo-client', version: '1.0.0' }, { roots: { listChanged: 'yes' } });
    for (let round = 0; round < 3; round++) {
      expect(plainRequest(valid, HEADERS)?.name).toBe('list_accounts');
      expect(plainRequest(badVersion, HEADERS)).toBeUndefined();
      expect(plainRequest(badCapabilities, HEADERS)).toBeUndefined();
    }
  });

  it('checks an envelope whose text holds null every time (1e400 parses to Infinity and prints as null)', () => {
    const infinite = JSON.parse('{"name":"memo-inf","version":"1","title":1e400}') as unknown;
    const nulled = { name: 'memo-inf', version: '1', title: null };
    for (let round = 0; round < 2; round++) {
      expect(plainRequest(call(infinite, {}), HEADERS)).toBeUndefined();
      expect(plainRequest(call(nulled, {}), HEADERS)).toBeUndefined();
      expect(plainRequest(call({ name: 'memo-inf', version: '1' }, {}), HEADERS)?.era).toBe('modern');
    }
  });
});
