import { createServer, STATUS_CODES, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { GatewayConfig } from '../../config/types.ts';
import { jsonRpcErrorBody } from '../errors.ts';
import { cutUnreadAnswers, type UnreadAnswer } from './send-timeout.ts';

/** A request answered before any handler saw it (Node's parser refused it, or a CONNECT): what its access line and metric say. */
export interface UnparsedRequest {
  status: number;
  /** CONNECT, else unknown (the request line may not have been read). */
  method?: string;
  /** Node's error code (`HPE_HEADER_OVERFLOW`, `ERR_HTTP_REQUEST_TIMEOUT`, ...). */
  code?: string;
  /** The socket's peer, as written. */
  remoteAddress?: string;
}

/**
 * A Node HTTP server for the gateway's listeners, bounded: `maxHeaderSize` from `limits.headerBytes`,
 * `headersTimeout` / `requestTimeout` / `keepAliveTimeout` from `server.*` (config/schema.json), so a
 * client that trickles its headers or body cannot hold a connection for Node's defaults (60 s / 300 s).
 * Requests Node refuses before any handler runs (headers too large, a malformed request line or header,
 * a request not received in time) get a JSON-RPC error body, like every other refusal of the gateway,
 * instead of Node's bare status line: see {@link clientErrorResponse}; so does a CONNECT, which Node
 * would close unanswered: see {@link connectResponse}. A connection whose client takes nothing of an
 * answer for `server.sendTimeoutMs` is reset, and `onUnreadAnswer` told (send-timeout.ts). Each request answered
 * so before any handler ran is told to `onUnparsed`, for its access line and metric (SRE try-out: a 431 and a
 * slow client's 408 left neither).
 */
export function createGatewayServer(
  config: GatewayConfig,
  listener: RequestListener,
  onUnreadAnswer: (cut: UnreadAnswer) => void,
  onUnparsed: (request: UnparsedRequest) => void = () => {},
): Server {
  const server = createServer(
    {
      maxHeaderSize: config.limits.headerBytes,
      headersTimeout: config.server.headersTimeoutMs,
      requestTimeout: config.server.requestTimeoutMs,
      keepAliveTimeout: config.server.keepAliveTimeoutMs,
      // The edge answers an HTTP/1.1 request without Host itself (400 with a JSON-RPC body, edge.ts
      // originRefusal): Node's own check answers a bare 400 with no body (try-out).
      requireHostHeader: false,
      // Node checks the two request timeouts on this interval (default 30 s, which would triple a 10 s bound).
      connectionsCheckingInterval: Math.min(1000, config.server.headersTimeoutMs),
    },
    listener,
  );
  server.keepAliveTimeout = config.server.keepAliveTimeoutMs;
  cutUnreadAnswers(server, config.server.sendTimeoutMs, onUnreadAnswer);
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable) return void socket.destroy();
    // Headers read and a response begun (a body that trickles past requestTimeout): answer through it, once.
    const response = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (response) {
      if (response.headersSent) return void socket.destroy();
      const raw = clientErrorResponse(error.code, config.limits.headerBytes);
      const status = Number(raw.slice(9, 12));
      response.writeHead(status, { 'content-type': 'application/json', connection: 'close' }).end(raw.slice(raw.indexOf('\r\n\r\n') + 4));
      return;
    }
    const raw = clientErrorResponse(error.code, config.limits.headerBytes);
    socket.end(raw);
    onUnparsed({ status: Number(raw.slice(9, 12)), code: error.code, remoteAddress: (socket as Duplex & { remoteAddress?: string }).remoteAddress });
  });
  // Without a listener Node destroys a CONNECT's socket unanswered; the gateway tunnels nothing.
  server.on('connect', (_req, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    socket.end(connectResponse());
    onUnparsed({ status: 405, method: 'CONNECT', remoteAddress: (socket as Duplex & { remoteAddress?: string }).remoteAddress });
  });
  return server;
}

/**
 * The raw HTTP/1.1 answer to a CONNECT (RFC 9110 §9.3.6: a tunnel to the authority it names), which
 * no route of the gateway serves: 405 with a JSON-RPC error body (`id: null`), an empty `Allow` (the
 * authority-form target names no resource here, so none of its methods is allowed, RFC 9110 §10.2.1),
 * and `connection: close`. The target is not repeated.
 */
function connectResponse(): string {
  const { status, text } = jsonRpcErrorBody('method_not_allowed', 'Method Not Allowed: CONNECT asks for a tunnel, and the gateway is not a proxy');
  return rawResponse(status, text, 'allow: \r\n');
}

/** An HTTP/1.1 response with a JSON body, closing the connection, as raw text. */
function rawResponse(status: number, body: string, extraHeaders = ''): string {
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extraHeaders}connection: close\r\n\r\n${body}`;
}

/**
 * The raw HTTP/1.1 response for a request Node's parser refused (`code`: the error's code, e.g.
 * `HPE_HEADER_OVERFLOW`), with a JSON-RPC error body (`id: null`: no request was read):
 * - headers over `limits.headerBytes`: 431 (RFC 6585 §5), -32600;
 * - a request not received within `server.headersTimeoutMs` / `requestTimeoutMs`: 408, -32600;
 * - anything else unparseable (request line, header syntax, body framing): 400, -32600.
 * The connection is closed after it (`connection: close`): the parser's state is unknown.
 */
export function clientErrorResponse(code: string | undefined, headerBytes: number): string {
  const [status, message] =
    code === 'HPE_HEADER_OVERFLOW'
      ? [431, `Invalid Request: the request line and headers exceed limits.headerBytes (${headerBytes} bytes)`]
      : code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Invalid Request: the request was not received in time (server.headersTimeoutMs / server.requestTimeoutMs)']
        : [400, `Invalid Request: malformed HTTP request${code ? ` (${code})` : ''}`];
  return rawResponse(status, jsonRpcErrorBody('invalid_request', message).text);
}
