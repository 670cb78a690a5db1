import { Server, type CallToolResult, type Implementation, type Result } from '@modelcontextprotocol/server';

/**
 * The SDK's own wire codecs (SDK 2.4 core `wire/rev2025-11-25` and `wire/rev2026-07-28`): what its
 * protocol layer runs on every result and error it sends and every result it receives, for the era a
 * connection negotiated. The SDK does not export them; a Server subclass reaches them through the
 * protected accessor the SDK gives role classes (`_wireCodec()`, "for routing era-dependent behavior
 * through the codec's function-only surface"), after setting the negotiated version the accessor reads.
 * Only the functions the gateway calls are typed here.
 */
export interface SdkWireCodec {
  /** The revision the codec implements: 2025-11-25 for every initialize-based one, 2026-07-28. */
  readonly era: string;
  /** Whether the era has this client-to-server request method (its registry; others are -32601 before any handler). */
  hasRequestMethod(method: string): boolean;
  /** The encode contract a result goes through before it is sent (2026: resultType, cache fields, serverInfo, deleted fields; 2025: SEP-2106 wraps). */
  encodeResult(method: string, result: Result, serverInfo?: Implementation): Result;
  /** A tools/call result as the era carries it (spec server/tools §Structured Content). */
  projectCallToolResult(result: CallToolResult, advertisedOutputSchema: Readonly<Record<string, unknown>> | undefined): CallToolResult;
  /** The code a handler's error is sent with. */
  encodeErrorCode(code: number): number;
  /** A received result classified (`complete`, `input_required`, `invalid`, ...), as the SDK client decodes it. */
  decodeResult(method: string, raw: unknown): { kind: string; result?: unknown; error?: Error };
}

class CodecAccess extends Server {
  codecFor(revision: string | undefined): SdkWireCodec {
    this._negotiatedProtocolVersion = revision;
    return this._wireCodec() as unknown as SdkWireCodec;
  }
}

const access = new CodecAccess({ name: 'codec-access', version: '0' }, { capabilities: {} });

/** The SDK's codec for `revision` (its own era rule: a revision from 2026-07-28 on is modern; anything else, or none, legacy). */
export function sdkCodecFor(revision: string | undefined): SdkWireCodec {
  return access.codecFor(revision);
}

const MODERN = sdkCodecFor('9999-12-31');
const LEGACY = sdkCodecFor(undefined);

/**
 * Whether the SDK's server answers a request of `method` on `era` with -32601 before it looks for any
 * handler (Protocol `_onrequest`): a method of the protocol (one of the two eras' codecs has it) that
 * this era does not have, unless registered with a schema of its own where an extension reuses the
 * name (tasks/get and tasks/cancel on 2026-07-28, SEP-2663). Any other request reaches a handler or the
 * fallback handler.
 */
export function sdkRefusesBeforeDispatch(era: 'modern' | 'legacy', method: string, registeredWithSchema: boolean): boolean {
  const spec = MODERN.hasRequestMethod(method) || LEGACY.hasRequestMethod(method);
  if (!spec || (era === 'modern' ? MODERN : LEGACY).hasRequestMethod(method)) return false;
  return !(era === 'modern' && registeredWithSchema && (method === 'tasks/get' || method === 'tasks/cancel'));
}
