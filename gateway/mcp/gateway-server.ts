import type { JSONRPCRequest, Result, ServerContext } from '@modelcontextprotocol/server';
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
  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const wrapped = super._wrapHandler(method, handler);
    return async (request, ctx) => {
      try {
        return await wrapped(request, ctx);
      } catch (error) {
        if (error instanceof GatewayError || error instanceof RelayedUpstreamError) throw error;
        throw invalidParams(method, request) ?? error;
      }
    };
  }
}
