import type { PlatformRequest } from './tools/tool-definition.ts';

/**
 * Moves one tool call's request to the platform API and back. Knows no tool semantics: it adds the
 * caller's credential headers and a request id, retries eligible GETs on transient failures within a
 * bounded budget, and never retries writes (a retried order could trade twice).
 */

/** Credential headers forwarded verbatim from the MCP caller (see caller-credentials.ts). */
export type CredentialHeaders = Record<string, string>;

/** The platform answered with a non-2xx status. `message` is the platform's own. */
export class PlatformHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** No answer from the platform: refused, reset, or timed out. `sent` is false when it surely never arrived. */
export class PlatformUnreachableError extends Error {
  constructor(
    message: string,
    readonly attempts: number,
    readonly sent: boolean,
  ) {
    super(message);
  }
}

export interface RetryPolicy {
  /** Attempts for a GET, first one included. */
  attempts: number;
  /** Per-attempt timeout, ms. */
  attemptTimeoutMs: number;
  /** No new attempt starts after this much time since the first, ms. */
  budgetMs: number;
  /** Backoff before attempt n+1 is backoffMs * 2^(n-1), ms. */
  backoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, attemptTimeoutMs: 10_000, budgetMs: 15_000, backoffMs: 100 };

const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function causeCode(error: unknown): string {
  const cause = (error as { cause?: { code?: string; name?: string } }).cause;
  return cause?.code ?? (error as { name?: string }).name ?? 'unknown';
}

function urlFor(baseUrl: string, request: PlatformRequest): string {
  const url = new URL(request.path, baseUrl);
  for (const [key, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  return url.toString();
}

/** Told about each retry (for logs): the attempt that failed and why (an HTTP status or an error code). */
export type RetryObserver = (event: { path: string; attempt: number; reason: string }) => void;

export class PlatformClient {
  constructor(
    private readonly baseUrl: string,
    private readonly credentials: CredentialHeaders,
    private readonly requestId: string,
    private readonly onRetry: RetryObserver = () => {},
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
  ) {}

  /** Sends `request`; resolves with the parsed JSON body of a 2xx answer, else throws a Platform*Error. */
  async send(request: PlatformRequest): Promise<unknown> {
    const retryable = request.method === 'GET';
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await this.attempt(request);
        if (response.status >= 500 && retryable && this.mayRetry(attempt, started)) {
          this.onRetry({ path: request.path, attempt, reason: `HTTP ${response.status}` });
          await response.body?.cancel();
          await this.backoff(attempt);
          continue;
        }
        return await this.parse(response);
      } catch (error) {
        if (error instanceof PlatformHttpError) throw error;
        const code = causeCode(error);
        const sent = !NEVER_SENT.has(code);
        if (retryable && this.mayRetry(attempt, started)) {
          this.onRetry({ path: request.path, attempt, reason: code });
          await this.backoff(attempt);
          continue;
        }
        throw new PlatformUnreachableError(`${code === 'TimeoutError' ? 'timed out' : code}`, attempt, sent);
      }
    }
  }

  private attempt(request: PlatformRequest): Promise<Response> {
    const headers: Record<string, string> = { ...this.credentials, accept: 'application/json', 'x-request-id': this.requestId };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    return fetch(urlFor(this.baseUrl, request), {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(this.retry.attemptTimeoutMs),
    });
  }

  private mayRetry(attempt: number, started: number): boolean {
    return attempt < this.retry.attempts && Date.now() - started + this.retry.backoffMs * 2 ** (attempt - 1) < this.retry.budgetMs;
  }

  private backoff(attempt: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, this.retry.backoffMs * 2 ** (attempt - 1)));
  }

  private async parse(response: Response): Promise<unknown> {
    const raw = await response.text();
    let body: unknown;
    try {
      body = raw === '' ? {} : JSON.parse(raw);
    } catch {
      throw new PlatformHttpError(response.status, 'invalid_response', `The platform answered HTTP ${response.status} with a body that is not JSON`);
    }
    if (response.ok) return body;
    const error = (body as { error?: { code?: string; message?: string; field?: string } }).error;
    throw new PlatformHttpError(response.status, error?.code ?? 'http_error', error?.message ?? `HTTP ${response.status}`, error?.field);
  }
}
