import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';

/**
 * What the edge and the MCP endpoint read and write of one HTTP exchange: the part of Koa's Context they
 * use, so that a Koa Context is one and the MCP POST can be served without Koa ({@link NodeExchange},
 * app.ts `createListener`). Header reads and writes follow Koa's: `get` is case-insensitive and '' when
 * absent, `set` replaces, `vary` appends.
 */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly method: string;
  /** The request path without its query. */
  readonly path: string;
  /** `http` or `https` (the gateway trusts no X-Forwarded-* header: Koa's `proxy` is off). */
  readonly protocol: string;
  /** The Host header. */
  readonly host: string;
  // biome-ignore lint/suspicious/noExplicitAny: Koa types its state as any; the edge puts `requestId` and `address` (the client address) on it.
  readonly state: any;
  status: number;
  /** A JSON body (an object, or JSON text already written), written when the handler returns unless `respond` is false. */
  body: unknown;
  /** false: the handler wrote the response itself. */
  respond?: boolean;
  get(field: string): string;
  set(field: string, value: string): void;
  set(fields: Record<string, string>): void;
  vary(field: string): void;
}

/**
 * An {@link Exchange} straight over node:http's request and response, for the MCP POST served without
 * Koa. Starts at 404, as a Koa Context does; {@link NodeExchange.finish} writes `body` as Koa would
 * (`application/json; charset=utf-8`, JSON, its length; JSON text as it is).
 */
export class NodeExchange implements Exchange {
  readonly state: { requestId?: string; address?: string } = {};
  body: unknown = undefined;
  respond = true;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly path: string,
  ) {
    res.statusCode = 404;
  }

  get method(): string {
    return this.req.method ?? 'GET';
  }

  get protocol(): string {
    return (this.req.socket as TLSSocket).encrypted ? 'https' : 'http';
  }

  get host(): string {
    return this.req.headers.host ?? '';
  }

  get status(): number {
    return this.res.statusCode;
  }

  set status(code: number) {
    this.res.statusCode = code;
  }

  get(field: string): string {
    const value = this.req.headers[field.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : (value ?? '');
  }

  set(field: string | Record<string, string>, value?: string): void {
    if (typeof field === 'string') this.res.setHeader(field, value!);
    else for (const [name, v] of Object.entries(field)) this.res.setHeader(name, v);
  }

  vary(field: string): void {
    const current = this.res.getHeader('vary');
    if (current === undefined) return void this.res.setHeader('vary', field);
    const fields = String(current)
      .split(',')
      .map((f) => f.trim().toLowerCase());
    if (!fields.includes('*') && !fields.includes(field.toLowerCase())) this.res.setHeader('vary', `${current}, ${field}`);
  }

  /** Writes the response the handler left in `status` and `body`, unless it answered itself or the caller left. */
  finish(): void {
    const res = this.res;
    if (!this.respond || res.headersSent || res.destroyed) return;
    if (this.body === undefined) {
      const text = STATUS_CODES[res.statusCode] ?? String(res.statusCode);
      res.setHeader('content-type', 'text/plain; charset=utf-8');
      res.setHeader('content-length', Buffer.byteLength(text));
      return void res.end(text);
    }
    const json = typeof this.body === 'string' ? this.body : JSON.stringify(this.body);
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('content-length', Buffer.byteLength(json));
    res.end(json);
  }
}
