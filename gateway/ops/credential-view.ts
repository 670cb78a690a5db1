/**
 * "What does this credential see": each MCP endpoint's tools/list as a client holding the credential
 * receives it, asked through the endpoint itself with a real MCP client (so the answer is the surfaces'
 * own rule, never a copy of it). Used by the console and by `gateway/main.ts tools`.
 *
 * The credential goes into the request headers of these requests only: it is not kept, returned or
 * put into an error message (an error names the surface and the HTTP status or JSON-RPC code).
 */
import { Client, SdkError, SdkErrorCode, SdkHttpError, StreamableHTTPClientTransport, type FetchLike, type Tool } from '@modelcontextprotocol/client';
import type { GatewayConfig } from '../../config/types.ts';

/** One tool of a listing, reduced to what an operator reads. */
export interface ToolSummary {
  name: string;
  title?: string;
  /**
   * The gateway's read/write decision as its listing states it: `annotations.readOnlyHint`, which the
   * gateway rewrites where `readOnlyOverrides` changes it (catalog/catalog.ts); absent is state-changing.
   */
  readOnly: boolean;
  hasOutputSchema: boolean;
}

/** One endpoint's answer: the tools listed, or why there are none. */
export interface SurfaceView {
  /** The endpoint path, e.g. `/mcp`. */
  path: string;
  tools?: ToolSummary[];
  /** Why the listing failed, e.g. `HTTP 401: ...`; never contains the credential. */
  error?: string;
}

/** The headers a caller sends for `key`+`secret` or `bearer`, under the header names of `credentials`. */
export function credentialHeaders(
  credentials: GatewayConfig['credentials'],
  input: { key?: string; secret?: string; bearer?: string },
): Record<string, string> {
  const headers: Record<string, string> = {};
  const bearer = input.bearer?.trim();
  if (bearer) headers.authorization = /^bearer\s/i.test(bearer) ? bearer : `Bearer ${bearer}`;
  const key = input.key?.trim();
  const secret = input.secret?.trim();
  if (key) headers[credentials.keyHeader.toLowerCase()] = key;
  if (secret) headers[credentials.secretHeader.toLowerCase()] = secret;
  return headers;
}

/**
 * Lists the tools of each endpoint under `baseUrl` (e.g. http://127.0.0.1:3000 and `['/mcp', '/mcp/compact']`)
 * with `headers`, in the 2026-07-28 era, all pages. `fetchImpl` replaces the network (in-process use).
 * Never rejects: a failing endpoint gets `error`.
 */
export async function credentialView(
  baseUrl: string,
  paths: readonly string[],
  headers: Readonly<Record<string, string>>,
  fetchImpl: FetchLike = fetch,
): Promise<SurfaceView[]> {
  return Promise.all(paths.map((path) => surfaceView(new URL(path, baseUrl), headers, fetchImpl)));
}

async function surfaceView(url: URL, headers: Readonly<Record<string, string>>, fetchImpl: FetchLike): Promise<SurfaceView> {
  // The v2 client's per-request headers drop `authorization`: the credential goes in through fetch.
  let lastStatus: number | undefined;
  const withCredential: FetchLike = async (input, init) => {
    const merged = new Headers(init?.headers);
    for (const [name, value] of Object.entries(headers)) merged.set(name, value);
    const response = await fetchImpl(input, { ...init, headers: merged });
    lastStatus = response.status;
    return response;
  };
  const client = new Client({ name: 'mcp-catalog-gateway-console', version: '0.1.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  try {
    await client.connect(new StreamableHTTPClientTransport(url, { fetch: withCredential }));
    const { tools } = await client.listTools();
    return { path: url.pathname, tools: tools.map(summary) };
  } catch (error) {
    return { path: url.pathname, error: describeFailure(error, url, lastStatus) };
  } finally {
    await client.close().catch(() => undefined);
  }
}

function summary(tool: Tool): ToolSummary {
  return {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    readOnly: tool.annotations?.readOnlyHint === true,
    hasOutputSchema: tool.outputSchema !== undefined,
  };
}

/**
 * The failure in a few words: the HTTP status or the JSON-RPC error the endpoint answered, or why `url` could
 * not be reached. `lastStatus`: the status of the last answer, which a pinned client's negotiation failure
 * leaves out (a 421 to its server/discover probe read as "did not offer pinned protocol version").
 */
function describeFailure(error: unknown, url: URL, lastStatus?: number): string {
  const network = networkCode(error);
  if (network) return `cannot reach ${url.href} (${network}): is a gateway running there?`;
  if (error instanceof SdkHttpError) return `HTTP ${error.status}${error.status === 401 ? ': the credential was refused' : ''}`;
  if (error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed && lastStatus !== undefined && lastStatus >= 400)
    return `HTTP ${lastStatus}`;
  const code = (error as { code?: unknown }).code;
  const message = (error as Error).message ?? String(error);
  return `${typeof code === 'number' ? `JSON-RPC ${code}: ` : ''}${message.slice(0, 300)}`;
}

/** The system error code (ECONNREFUSED, ENOTFOUND, ...) somewhere in an error's cause chain, if any. */
function networkCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  }
  return undefined;
}
