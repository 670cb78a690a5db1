import {
  ProtocolError,
  Server,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type Result,
  type ServerContext,
  type Transport,
} from '@modelcontextprotocol/server';
import { RESOURCE_NOT_FOUND_2025 } from '../wire/error-translation.ts';
import { GatewayError, RelayedUpstreamError } from '../errors.ts';
import { invalidParams } from './invalid-params.ts';
import { reportMessage, type MessageLabels } from './message-metrics.ts';
import { askedTool, clientOf } from './admission.ts';
import type { Outcomes, Requester } from '../obs/outcomes.ts';
import { ERROR_CODE } from '../wire/jsonrpc.ts';

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/** Carries a relayed CreateTaskResult past the SDK's CallToolResult check (see {@link passTaskResults}). */
class TaskCreated extends Error {
  constructor(readonly result: Result) {
    super('task created');
  }
}

/**
 * The SDK (2.4) has no task runtime: its tools/call wrapper holds every result to CallToolResult, which
 * would reject a 2025-11-25 CreateTaskResult (`{ task }`, no content) and give a SEP-2663 one (`resultType:
 * "task"`) an empty `content`. A relayed task result (surfaces/tasks.ts relayCreatedTask) is passed
 * around that check as it is; the encoder still stamps the envelope (`resultType` "task" passes for
 * tools/call).
 */
function passTaskResults(handler: Handler): Handler {
  return async (request, ctx) => {
    const result = await handler(request, ctx);
    const task = (result as { task?: { taskId?: unknown } }).task;
    if (result.resultType === 'task' || (typeof task?.taskId === 'string' && !('content' in result))) throw new TaskCreated(result);
    return result;
  };
}

/** Where a server instance reports what it decides: the outcomes, its labels, and who the request is from. */
export interface ServerReporting {
  readonly outcomes: Outcomes;
  readonly labels: MessageLabels;
  readonly requester: Requester;
}

/**
 * The low-level Server each request is answered by. It reports every message it dispatches, through the
 * SDK's own extension points for server classes and observing only (obs/outcomes.ts; `mcp_requests_total`
 * subscribes): each request when its handler settles (`_wrapHandler`, which every handler goes through,
 * the SDK's initialize, ping and server/discover included: `error` when it throws), a request of a method
 * of this era nobody registered when the fallback answers it -32601 as the SDK does without one, each
 * notification as it arrives (`_onnotification`). What the SDK answers without any of these (a method of
 * the other era, `subscriptions/listen`) the edge reports (message-metrics.ts `answeredWithoutDispatch`).
 * It also answers params that break the method's spec schema with one -32602 line naming the offending path
 * (invalid-params.ts), and reports a tools/call refused so as a tool decision (the arms never ran). The
 * SDK checks params before a handler runs and answers its schema library's multi-line issue dump: -32602
 * on tools/call, -32603 (blaming the server for the client's request) on the other methods. The
 * gateway's own handlers only ever throw GatewayError or RelayedUpstreamError (mcp-server.ts), so any
 * other failure comes from the SDK's layers; it is rewritten only when the params really break the
 * schema, and left as it was otherwise.
 */
export class GatewayServer extends Server {
  /** Request ids whose relayed error code the SDK's encoder must not rewrite (see {@link connect}). */
  private readonly keptCodes = new Map<string | number, number>();

  constructor(
    info: ConstructorParameters<typeof Server>[0],
    options: ConstructorParameters<typeof Server>[1],
    private readonly reporting: ServerReporting,
  ) {
    super(info, options);
    // 2026-07-28 only: a method nobody registered must stay the SDK's dispatch-window -32601, which its
    // stateless transport answers HTTP 404 (SEP-2575; a fallback handler would make it an in-band 200). The
    // edge reports those (message-metrics.ts answeredWithoutDispatch). The 2025 wire answers in-band anyway.
    if (reporting.labels.era === 'legacy')
      this.fallbackRequestHandler = async (request) => {
        // A method of the other era never reaches here: the SDK answers it first, and the edge reports it.
        this.report(request.method, 'error');
        throw new ProtocolError(ERROR_CODE.methodNotFound, 'Method not found');
      };
  }

  // Called from Server's own constructor (initialize, ping) before this class's fields exist: they are read when a request runs.
  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const wrapped = super._wrapHandler(method, method === 'tools/call' ? passTaskResults(handler) : handler);
    return async (request, ctx) => {
      try {
        const result = await wrapped(request, ctx);
        this.report(method, 'ok');
        return result;
      } catch (error) {
        if (error instanceof TaskCreated) {
          this.report(method, 'ok');
          return error.result;
        }
        this.report(method, 'error');
        if (
          (error instanceof RelayedUpstreamError || error instanceof GatewayError) &&
          error.code === RESOURCE_NOT_FOUND_2025 &&
          this.reporting.labels.era === 'legacy'
        )
          this.keptCodes.set(request.id, error.code);
        if (error instanceof GatewayError || error instanceof RelayedUpstreamError) throw error;
        const invalid = invalidParams(method, request);
        if (invalid && method === 'tools/call') this.reportInvalidCall(request);
        throw invalid ?? error;
      }
    };
  }

  protected override _onnotification(notification: JSONRPCNotification, extra?: MessageExtraInfo): void {
    this.report(notification.method, 'ok');
    super._onnotification(notification, extra);
  }

  private report(method: string, outcome: 'ok' | 'error'): void {
    reportMessage(this.reporting.outcomes, this.reporting.labels, method, outcome);
  }

  /** A tools/call whose params break the spec (arguments not an object, a name not a string): refused before any arm ran, a tool decision. */
  private reportInvalidCall(request: JSONRPCRequest): void {
    const asked = askedTool(this.reporting.labels.endpoint, request as unknown as Record<string, unknown>)!;
    this.reporting.outcomes.emit({
      kind: 'tool',
      endpoint: this.reporting.labels.endpoint,
      requester: { ...this.reporting.requester, ...clientOf(request as unknown as Record<string, unknown>) },
      ...asked,
      outcome: 'invalid_arguments',
      reason: 'invalid_params',
      counted: { tool: 'unknown', outcome: 'invalid_arguments' },
      durationMs: 0,
    });
  }

  /**
   * The SDK's encoder turns -32002 into -32602 on every revision (SDK docs/migration upgrade-to-v2
   * "Typed ProtocolError subclasses"), but 2025-11-25 and earlier name resource-not-found -32002
   * (server/resources §Error Handling): a 2025-era upstream's -32002 relayed to a 2025-era caller keeps
   * its code, as does the gateway's own (`resource_not_found`: a URI no upstream serves, or one the caller
   * may not read); the 2026-07-28 translation is error-translation.ts's, before this.
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
