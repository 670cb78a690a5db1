import { StringDecoder } from 'node:string_decoder';

/**
 * JSON-RPC messages on a Server-Sent Events stream (WHATWG HTML §9.2; MCP basic/transports/
 * streamable-http), both directions: how the gateway frames its 2025 stateless answers as the SDK's
 * transport frames them, and the one reader of the streams it receives (an upstream's answer on the
 * undici hop, the SDK's answer collapsed to JSON for a caller that takes no SSE).
 */

/** The response headers of the SDK's stateless 2025 leg, which answers every request as one SSE event. */
export const LEGACY_SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' } as const;

/** One JSON-RPC message framed as the SDK frames it on an SSE stream: one `message` event, in pieces. */
export function sseMessageEvent<T extends string | Buffer>(message: readonly T[]): (string | T)[] {
  return ['event: message\ndata: ', ...message, '\n\n'];
}

/**
 * Reads an SSE stream chunk by chunk and hands on each event's data (its `data:` lines joined by \n,
 * one leading space dropped from each) when a blank line ends the event; an event the stream ends in
 * the middle of is discarded (WHATWG HTML §9.2.6, as the SDK client's parser does). `event:`, `id:`,
 * `retry:` and comments are skipped: the gateway resumes no stream. No promise or web stream per chunk:
 * the hop reads an upstream's answer from undici's callbacks.
 */
export class SseReader {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';
  private data: string[] = [];
  private dataChars = 0;

  constructor(private readonly ondata: (data: string) => void) {}

  /** Characters held for the event being read (its data lines so far and an unfinished line): what one event costs in memory. */
  get held(): number {
    return this.buffer.length + this.dataChars;
  }

  /** Reads one chunk; throws what `ondata` throws. */
  write(chunk: Buffer | string): void {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    const { buffer } = this;
    let start = 0;
    for (;;) {
      const end = buffer.indexOf('\n', start);
      if (end < 0) break;
      let line = buffer.slice(start, end);
      start = end + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') this.dispatch();
      else if (line.startsWith('data:')) {
        const data = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
        this.data.push(data);
        this.dataChars += data.length;
      }
    }
    this.buffer = buffer.slice(start);
  }

  /** The stream ended: an event not ended by a blank line is discarded. */
  end(): void {
    this.decoder.end();
    this.buffer = '';
    this.data = [];
    this.dataChars = 0;
  }

  private dispatch(): void {
    if (this.data.length === 0) return;
    const data = this.data.join('\n');
    this.data = [];
    this.dataChars = 0;
    this.ondata(data);
  }
}

/** The data of every event of a whole SSE body, in order. */
export function sseEvents(body: string): string[] {
  const events: string[] = [];
  const reader = new SseReader((data) => events.push(data));
  reader.write(body);
  reader.end();
  return events;
}
