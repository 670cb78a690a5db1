import type { FetchLikeMcpHandler } from '@modelcontextprotocol/node';
import { isLegacyRequest, type McpHttpHandler } from '@modelcontextprotocol/server';
import { markedAnsweredAsJson } from '../mcp/types.ts';
import { sseEvents } from '../wire/sse.ts';

/**
 * Wraps the SDK handler so a 2025-era POST whose Accept header does not name `text/event-stream`
 * (`application/json` alone, `*\/*`, none) is answered with a JSON body instead of 406. The SDK's
 * stateless legacy leg always answers requests over SSE, so the request is served with both types
 * accepted and the SSE answer is collapsed to its JSON-RPC response(s); request-scoped notifications
 * (progress) are dropped, exactly as the modern leg's JSON mode drops them. Modern requests and
 * clients that accept SSE are passed through untouched.
 */
export function withJsonForLegacyClients(handler: McpHttpHandler): FetchLikeMcpHandler {
  return {
    fetch: async (request, options) => {
      const accept = request.headers.get('accept') ?? '';
      if (request.method !== 'POST' || /text\/event-stream/i.test(accept)) return handler.fetch(request, options);
      if (!(await isLegacyRequest(request, options?.parsedBody))) return handler.fetch(request, options);
      const headers = new Headers(request.headers);
      headers.set('accept', 'application/json, text/event-stream');
      // Nothing but the response reaches such a caller: the handler must not ask it anything on the stream.
      const authInfo = options?.authInfo && markedAnsweredAsJson(options.authInfo);
      const response = await handler.fetch(new Request(request, { headers }), authInfo ? { ...options, authInfo } : options);
      if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return response;
      const answers = responsesIn(await response.text());
      const out = new Headers(response.headers);
      out.set('content-type', 'application/json');
      out.delete('content-length');
      return new Response(JSON.stringify(answers.length === 1 ? answers[0] : answers), { status: response.status, headers: out });
    },
  };
}

/** The JSON-RPC responses (not notifications) carried by the events of an SSE body. */
function responsesIn(sse: string): unknown[] {
  return sseEvents(sse)
    .filter(Boolean)
    .map((data) => JSON.parse(data) as { id?: unknown; method?: string })
    .filter((message) => message.method === undefined);
}
