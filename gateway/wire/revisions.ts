import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { sdkCodecFor } from './sdk-codec.ts';

/**
 * The protocol revisions the gateway serves, taken from the SDK: the initialize-based ones are the
 * SDK's exported list (`SUPPORTED_PROTOCOL_VERSIONS`, 2025-11-25 back to 2024-10-07, which its
 * stateless 2025 leg serves); the per-request-envelope one is the revision the SDK's modern codec
 * implements (its `era`: the SDK exports no modern list, and answers server/discover with exactly that
 * one). tests/in-process/wire-oracle.test.ts holds both to what the SDK's handler answers.
 */

/** An era of the protocol: `modern` (2026-07-28, the per-request `_meta` envelope) or `legacy` (initialize-based). */
export type Era = 'modern' | 'legacy';

/** A revision far past any the SDK knows: its era rule makes it modern, so its codec is the modern one. */
const FAR_FUTURE = '9999-12-31';

/** The per-request-envelope revisions the SDK serves (2026-07-28). */
export const MODERN_REVISIONS: readonly string[] = [sdkCodecFor(FAR_FUTURE).era];
/** The initialize-based revisions (2024-10-07 to 2025-11-25) the SDK serves statelessly, newest first. */
export const LEGACY_REVISIONS: readonly string[] = [...SUPPORTED_PROTOCOL_VERSIONS];
/** Every revision the gateway serves, newest first. */
export const SERVED_REVISIONS: readonly string[] = [...MODERN_REVISIONS, ...LEGACY_REVISIONS].sort().reverse();

const modern: ReadonlySet<string> = new Set(MODERN_REVISIONS);
const legacy: ReadonlySet<string> = new Set(LEGACY_REVISIONS);

/** The era of a revision the gateway serves, or undefined for one it does not serve. */
export function servedEra(revision: string): Era | undefined {
  return modern.has(revision) ? 'modern' : legacy.has(revision) ? 'legacy' : undefined;
}

/** First protocol revision without JSON-RPC batching (2025-06-18 removed it; 2026-07-28 keeps it out). */
export const FIRST_REVISION_WITHOUT_BATCHES = '2025-06-18';
/**
 * The one revision with JSON-RPC batching: 2025-03-26's changelog says "Added support for JSON-RPC
 * batching (PR #228)"; 2024-11-05 (and the 2024-10-07 draft) define no batch message.
 */
export const REVISION_WITH_BATCHES = '2025-03-26';
/**
 * The revision a 2025-era request without an MCP-Protocol-Version header is served as (2025-11-25
 * basic/transports §Protocol Version Header: the server SHOULD assume 2025-03-26).
 */
export const REVISION_WITHOUT_HEADER = '2025-03-26';
/**
 * Most messages one JSON-RPC batch may hold: the MCP SDK's Streamable HTTP entry refuses a longer one
 * whole (`@modelcontextprotocol/server` MAX_BATCH_SIZE, -32600 "Batch must not exceed 100 messages").
 * The edge refuses it first, with `data.kind` and one refusal for the request (mcp-endpoint.ts).
 */
export const MAX_BATCH_MESSAGES = 100;
