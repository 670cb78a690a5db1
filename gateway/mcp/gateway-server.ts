import type { JSONRPCMessage, JSONRPCRequest, Result, ServerContext, Transport } from '@modelcontextprotocol/server';
import { RESOURCE_NOT_FOUND_2025 } from './error-translation.ts';
import { GatewayError, RelayedUpstreamError } from '../errors.ts';
import { invalidParams } from './invalid-params.ts';
import { MeteredServer } from './message-metrics.ts';

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/**
 * The low-level Server each request is answered by: it counts its messages ({@link MeteredServer}) and
 * answers params that break the method's spec schema with one -32602 line naming the offending path
 * (invalid-params.ts). The SDK checks params before a handler runs and answers its schema library's
 * multi-line issue dump: -32602 on tools/call, -32603 (blaming the server for the client's request) on
 * the other methods. The gateway's own handlers only ever throw GatewayError or RelayedUpstreamError
 * (mcp-server.ts), so any other failure comes from the SDK's layers; it is rewritten only when the
 * params really break the schema, and left as it was otherwise.
 */
export class GatewayServer extends MeteredServer {
  /** Request ids whose relayed error code the SDK's encoder must not rewrite (see {@link connect}). */
  private readonly keptCodes = new Map<string | number, number>();

  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const wrapped = super._wrapHandler(method, handler);
    return async (request, ctx) => {
      try {
        return await wrapped(request, ctx);
      } catch (error) {
        if (error instanceof RelayedUpstreamError && error.code === RESOURCE_NOT_FOUND_2025 && this.labels.era === 'legacy')
          this.keptCodes.set(request.id, error.code);
        if (error instanceof GatewayError || error instanceof RelayedUpstreamError) throw error;
        throw invalidParams(method, request) ?? error;
      }
    };
  }

  /**
   * The SDK's encoder turns -32002 into -32602 on every revision (SDK docs/migration upgrade-to-v2
   * "Typed ProtocolError subclasses"), but 2025-11-25 and earlier name resource-not-found -32002
   * (server/resources §Error Handling): a 2025-era upstream's -32002 relayed to a 2025-era caller keeps
   * its code (the 2026-07-28 translation is error-translation.ts's, before this).
   */
  override async connect(transport: Transport): Promise<void> {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const id = 'error' in message && 'id' in message ? (message.id as string | number | null | undefined) : undefined;
      const kept = id === undefined || id === null ? undefined : this.keptCodes.get(id);
      if (kept === undefined) return send(message, options);
      this.keptCodes.delete(id!);
      return send({ ...message, error: { ...(message as { error: { code: number; message: string } }).error, code: kept } } as JSONRPCMessage, options);
    };
    await super.connect(transport);
  }
}
