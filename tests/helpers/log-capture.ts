import { Writable } from 'node:stream';

/** A pino destination that keeps every line, for asserting what the gateway logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];

  constructor() {
    super({ write: (chunk, _encoding, done) => (this.lines.push(...String(chunk).split('\n').filter(Boolean)), done()) });
  }

  /** Parsed records whose `msg` contains `text`. */
  records(text?: string): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => text === undefined || String(r.msg).includes(text));
  }

  get text(): string {
    return this.lines.join('\n');
  }
}
