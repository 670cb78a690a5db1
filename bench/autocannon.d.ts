/**
 * The part of autocannon 9's programmatic API the benchmarks use (the package ships no typings;
 * see node_modules/autocannon/README.md "API").
 */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    type Context = Record<string, unknown>;
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Returns the request to send (a falsy value restarts the sequence). */
      setupRequest?: (request: Request, context: Context) => Request | undefined;
      onResponse?: (status: number, body: string, context: Context, headers: Record<string, string>) => void;
    }
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      connections?: number;
      /** Seconds. */
      duration?: number;
      amount?: number;
      pipelining?: number;
      /** Seconds. */
      timeout?: number;
      overallRate?: number;
      /** ms between samples; completion is checked on this tick (default 1000). */
      sampleInt?: number;
      connectionRate?: number;
      requests?: Request[];
      initialContext?: Context;
      verifyBody?: (body: string) => boolean;
      title?: string;
    }
    interface Stats {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }
    interface Result {
      title?: string;
      url: string;
      connections: number;
      duration: number;
      start: Date;
      finish: Date;
      errors: number;
      timeouts: number;
      mismatches: number;
      non2xx: number;
      resets: number;
      '1xx': number;
      '2xx': number;
      '3xx': number;
      '4xx': number;
      '5xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Stats;
      requests: Stats & { sent: number };
      throughput: Stats;
    }
    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
      on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): this;
      on(event: string, listener: (...args: unknown[]) => void): this;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
