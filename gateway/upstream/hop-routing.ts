import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type Client,
  type StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import type { UpstreamConfig } from '../../config/types.ts';
import { forwardedHeaders } from '../auth/credentials.ts';
import { withTraceHeaders } from '../obs/tracing.ts';
import { HttpHop, type HopCall, type HopSession } from './http-hop.ts';
import { GATEWAY_CLIENT, LIST_ITEMS, type ForwardMethod, type ForwardOptions, type ListMethod } from './types.ts';

/**
 * The methods the undici hop carries to a connected HTTP upstream (http-hop.ts): every per-request method
 * and the list pages; the rest (handshake, server/discover, listen streams) stays with the SDK client.
 */
const HOP_METHODS: ReadonlySet<string> = new Set<ForwardMethod | ListMethod>([
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'prompts/list',
  'tools/call',
  'resources/read',
  'prompts/get',
  'completion/complete',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'tasks/update',
]);

/** The list_changed notifications an upstream may send on a hopped request's stream, by the list they concern. */
const LIST_CHANGED: Readonly<Record<string, ListMethod>> = {
  'notifications/tools/list_changed': 'tools/list',
  'notifications/prompts/list_changed': 'prompts/list',
  'notifications/resources/list_changed': 'resources/list',
};

/** Where the upstream's notifications on a hopped request's stream go beyond that request. */
export interface HopRelays {
  listChanged(method: ListMethod): void;
  resourceUpdated(uri: string): void;
  /** `limits.resultBytes`: the bound of an answer to a forwarded request (the catalogue's list pages have none). */
  resultBytes(): number;
}

/**
 * Which requests to one HTTP upstream travel on the undici hop (http-hop.ts: a keep-alive pool,
 * `upstreams[].connections` sockets at most) instead of the SDK client: the {@link HOP_METHODS}, inside
 * a session the SDK client's handshake opened ({@link adopt}), with the credential and request id of
 * the forward as explicit arguments, never read from ambient state. None when the upstream is reached in
 * process (createRuntime's `upstreamTransport`) or over stdio: everything then stays with the SDK client.
 */
export class HopRouting {
  private readonly hop?: HttpHop;
  /** The hop's view of each connected HTTP client: revision, session id, envelope. */
  private readonly sessions = new WeakMap<Client, HopSession>();

  constructor(
    /** The upstream's configuration in force (a live reload may change its per-call settings). */
    private readonly config: () => UpstreamConfig,
    /** Whether the upstream is reached over the network (no in-process transport given). */
    overNetwork: boolean,
    private readonly relays: HopRelays,
  ) {
    const { url, command, headers, connections } = config();
    if (overNetwork && url !== undefined && command === undefined) this.hop = new HttpHop(url, headers, connections);
  }

  /** Records what `client`'s handshake negotiated, so the hop can carry its requests. */
  adopt(client: Client, transport: StreamableHTTPClientTransport): void {
    if (this.hop) this.sessions.set(client, hopSession(client, transport));
  }

  /**
   * `method` sent on the hop inside `client`'s session, as the SDK client would have sent it; undefined
   * when the SDK client must carry it (not a hop method, no hop, or a client the hop has no session of).
   * Errors come out as the SDK client's, so callers cannot tell which carried the request.
   */
  route(client: Client | undefined, method: string, params: Record<string, unknown>, options: ForwardOptions): Promise<Record<string, unknown>> | undefined {
    if (!this.hop || client === undefined || !HOP_METHODS.has(method)) return undefined;
    const session = this.sessions.get(client);
    // The catalogue's own list pages (LIST_ITEMS) are not a caller's, and as large as its catalogue: limits.maxListPages bounds them.
    return session && this.hop.request(session, method, params, this.call(options, method in LIST_ITEMS ? undefined : this.relays.resultBytes()));
  }

  async close(): Promise<void> {
    await this.hop?.close();
  }

  /** What the hop needs of one forward: the credential headers and request id it was given, and the relays. */
  private call(options: ForwardOptions, maxBytes: number | undefined): HopCall {
    return {
      maxBytes,
      credentialHeaders: this.config().forwardCredentials ? forwardedHeaders(options.credential) : undefined,
      requestId: options.requestId,
      signal: options.signal,
      onprogress: options.onprogress,
      onlog: options.onlog,
      onnotification: (method, params) => {
        const list = Object.hasOwn(LIST_CHANGED, method) ? LIST_CHANGED[method] : undefined;
        if (list) this.relays.listChanged(list);
        const uri = (params as { uri?: unknown } | undefined)?.uri;
        if (method === 'notifications/resources/updated' && typeof uri === 'string') this.relays.resourceUpdated(uri);
        if (method === 'notifications/tasks/status' && params !== null && typeof params === 'object') options.ontaskstatus?.(params as Record<string, unknown>);
      },
      oninputrequest: options.oninputrequest,
      // The hop bypasses the SDK transport's fetch hook, so the trace context goes on here.
      headers: withTraceHeaders(options.headers),
      allowInputRequired: options.allowInputRequired,
      allowTaskResult: options.allowTaskResult,
      timeoutMs: this.config().timeoutMs,
    };
  }
}

/** The hop's view of a connected client: what its handshake negotiated, and the 2026-07-28 envelope it sends. */
function hopSession(client: Client, transport: StreamableHTTPClientTransport): HopSession {
  const era = client.getProtocolEra() === 'modern' ? 'modern' : 'legacy';
  const protocolVersion = client.getNegotiatedProtocolVersion() ?? '2025-03-26';
  return {
    era,
    protocolVersion,
    sessionId: transport.sessionId,
    // The SDK client's outbound envelope (its codec's outboundEnvelope): this hop's client declares no capabilities.
    envelope:
      era === 'modern'
        ? { [PROTOCOL_VERSION_META_KEY]: protocolVersion, [CLIENT_INFO_META_KEY]: GATEWAY_CLIENT, [CLIENT_CAPABILITIES_META_KEY]: {} }
        : undefined,
  };
}
