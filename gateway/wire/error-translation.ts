/**
 * Upstream JSON-RPC errors as the CALLER's revision must see them. An upstream speaks its own revision;
 * the gateway speaks the caller's, so a code the caller's revision forbids, or one that describes the
 * gateway's own hop to the upstream rather than the caller's request, is translated here. Everything
 * not in {@link ERROR_TRANSLATIONS} is relayed unchanged (code, message and data).
 *
 * Pure: no I/O, no SDK server state. The one function the forwarding paths call is
 * {@link translateUpstreamError}; README "Error codes by revision" documents the same table.
 */
import { ERROR_CODE } from './jsonrpc.ts';
import type { Era } from './revisions.ts';

/** A JSON-RPC error object (JSON-RPC 2.0 §5.1). */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** 2026-07-28 InputRequiredResult (basic/patterns/mrtr): what a -32042 becomes for a 2026-07-28 caller. */
export interface InputRequired {
  resultType: 'input_required';
  inputRequests: Record<string, { method: 'elicitation/create'; params: Record<string, unknown> }>;
}

/** What the caller receives instead of the upstream's error: an error, or (2026-07-28) an input request. */
export type Translated = { kind: 'error'; error: RpcError; translated: boolean } | { kind: 'input_required'; result: InputRequired };

export interface TranslationContext {
  era: Era;
  /** The forwarded method (`tools/call`, `resources/read`, ...): an input request only answers the MRTR ones. */
  method: string;
  /** The caller's 2026-07-28 `clientCapabilities` (its request envelope), for the URL-elicitation rule. */
  clientCapabilities?: Record<string, unknown>;
}

/** One row of the table: which upstream code, for which callers, becomes what, and the spec rule behind it. */
export interface TranslationRule {
  upstreamCode: number;
  callers: Era | 'all';
  to: number | 'input_required';
  source: string;
  /** Only an error this says yes to (the row's method and data); absent: every error of the code. */
  applies?: (error: RpcError, context: TranslationContext) => boolean;
}

export const RESOURCE_NOT_FOUND_2025 = ERROR_CODE.resourceNotFound;
export const URL_ELICITATION_REQUIRED_2025 = ERROR_CODE.urlElicitationRequired;
const HEADER_MISMATCH = ERROR_CODE.headerMismatch;
const MISSING_REQUIRED_CLIENT_CAPABILITY = ERROR_CODE.missingRequiredClientCapability;
const UNSUPPORTED_PROTOCOL_VERSION = ERROR_CODE.unsupportedProtocolVersion;
const INVALID_PARAMS = ERROR_CODE.invalidParams;
const INTERNAL_ERROR = ERROR_CODE.internalError;

/** The methods whose 2026-07-28 result may be `input_required` (spec 2026-07-28 basic/patterns/mrtr). */
const INPUT_REQUIRED_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/**
 * The table. `callers: 'modern'` = 2026-07-28 callers; 2025-era callers (2025-11-25 back to 2024-10-07)
 * get these codes unchanged, as their revisions define them.
 */
export const ERROR_TRANSLATIONS: readonly TranslationRule[] = [
  {
    upstreamCode: RESOURCE_NOT_FOUND_2025,
    callers: 'modern',
    to: INVALID_PARAMS,
    source: '2026-07-28 basic/index §Error Codes ("MUST NOT emit -32002"), server/resources §Error Handling (-32602)',
  },
  {
    upstreamCode: INVALID_PARAMS,
    callers: 'legacy',
    to: RESOURCE_NOT_FOUND_2025,
    source:
      "2024-11-05..2025-11-25 server/resources §Error Handling (resource not found: -32002): a 2026-07-28 upstream's not-found is " +
      '-32602 with data.uri (server/resources §Error Handling); the same on resources/read to a 2025-era caller is -32002 (protocol try-out)',
    applies: (error, context) => context.method === 'resources/read' && isObject(error.data) && typeof error.data.uri === 'string',
  },
  {
    upstreamCode: URL_ELICITATION_REQUIRED_2025,
    callers: 'modern',
    to: 'input_required',
    source:
      '2026-07-28 basic/index §Error Codes ("MUST NOT emit -32042"); client/elicitation §URL Mode Flow: URL elicitation rides an ' +
      "InputRequiredResult. Without elicitation.url in the caller's capabilities: -32021; on a method without input_required: -32603",
  },
  {
    upstreamCode: HEADER_MISMATCH,
    callers: 'all',
    to: INTERNAL_ERROR,
    source: "the upstream judged the gateway's own request headers (SEP-2243): the gateway's failure, not the caller's request",
  },
  {
    upstreamCode: UNSUPPORTED_PROTOCOL_VERSION,
    callers: 'all',
    to: INTERNAL_ERROR,
    source: "the upstream refused the revision the gateway speaks to it: the caller's own revision was accepted by the gateway",
  },
];

/**
 * The caller's view of an upstream's JSON-RPC error (see {@link ERROR_TRANSLATIONS}). A translated
 * error keeps the upstream's message and carries `data.upstreamCode` (and the upstream's `data` where it
 * still applies: -32002's `{ uri }` is exactly -32602's resource-not-found data). -32042 to a 2026-07-28
 * caller becomes an InputRequiredResult whose `inputRequests` are the URL-mode elicitations the upstream
 * listed (`elicitationId` dropped: 2026-07-28 has none); the caller answers them and retries, and the
 * retry reaches the 2025-era upstream as a new call, which is the 2025 flow after a URL elicitation.
 */
export function translateUpstreamError(error: RpcError, context: TranslationContext): Translated {
  const rule = ERROR_TRANSLATIONS.find(
    (r) => r.upstreamCode === error.code && (r.callers === 'all' || r.callers === context.era) && (r.applies?.(error, context) ?? true),
  );
  if (!rule) return { kind: 'error', error, translated: false };
  if (rule.to !== 'input_required') {
    // A not-found either way keeps its data (`{ uri }` in both revisions).
    const keepsData = (rule.to === INVALID_PARAMS || rule.to === RESOURCE_NOT_FOUND_2025) && isObject(error.data);
    const data = keepsData ? { ...(error.data as Record<string, unknown>), upstreamCode: error.code } : { upstreamCode: error.code };
    const message = rule.to === INTERNAL_ERROR ? `Internal error: the upstream refused the gateway's request (${error.code}: ${error.message})` : error.message;
    return { kind: 'error', error: { code: rule.to, message, data }, translated: true };
  }
  return urlElicitation(error, context);
}

function urlElicitation(error: RpcError, context: TranslationContext): Translated {
  const elicitations = isObject(error.data) && Array.isArray(error.data.elicitations) ? error.data.elicitations.filter(isUrlElicitation) : [];
  if (!INPUT_REQUIRED_METHODS.has(context.method) || elicitations.length === 0) {
    return {
      kind: 'error',
      error: {
        code: INTERNAL_ERROR,
        message: `Internal error: the upstream asked for a URL elicitation that ${context.method} cannot carry to this caller (${error.message})`,
        data: { upstreamCode: error.code },
      },
      translated: true,
    };
  }
  const elicitation = isObject(context.clientCapabilities?.elicitation) ? context.clientCapabilities.elicitation : undefined;
  if (!elicitation || !isObject(elicitation.url)) {
    return {
      kind: 'error',
      error: {
        code: MISSING_REQUIRED_CLIENT_CAPABILITY,
        message: `Missing required client capability: elicitation.url (${error.message})`,
        data: { requiredCapabilities: { elicitation: { url: {} } }, upstreamCode: error.code },
      },
      translated: true,
    };
  }
  const inputRequests: InputRequired['inputRequests'] = {};
  elicitations.forEach((e, i) => {
    const { elicitationId: _id, ...params } = e;
    inputRequests[`url-elicitation-${i + 1}`] = { method: 'elicitation/create', params: { ...params, mode: 'url' } };
  });
  return { kind: 'input_required', result: { resultType: 'input_required', inputRequests } };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function isUrlElicitation(value: unknown): value is Record<string, unknown> & { url: string; message: string } {
  return isObject(value) && typeof value.url === 'string' && typeof value.message === 'string' && (value.mode === undefined || value.mode === 'url');
}
