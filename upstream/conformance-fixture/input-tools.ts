import { randomUUID } from 'node:crypto';
import type {
  CallToolResult,
  ClientCapabilities,
  InputRequests,
  InputRequiredResult,
  McpServer,
  ServerContext,
  ServerNotifier,
} from '@modelcontextprotocol/server';
import {
  acceptedContent,
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';

type State = Record<string, unknown>;

/**
 * `requestState` comes back from the client, so it is HMAC-sealed with a per-process key (SEP-2322:
 * a server that lets the state steer behaviour MUST integrity-protect it). Its `verify` goes into the
 * server options, so tampered state is refused with -32602 before any handler runs.
 */
export const requestStateCodec = createRequestStateCodec<State>({ key: crypto.getRandomValues(new Uint8Array(32)) });

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const askName = (message = 'What is your name?') =>
  inputRequired.elicit({
    message,
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  });
const askConfirm = () =>
  inputRequired.elicit({
    message: 'Please confirm',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  });

/**
 * Tools that need something from the client: push-style sampling/elicitation (2025 wire, `test_sampling`,
 * `test_elicitation*`), in-band input requests (2026-07-28, `test_input_required_result_*`), and the
 * `server-stateless` diagnostics (`test_missing_capability`, `test_streaming_elicitation`,
 * `test_logging_tool`, `test_trigger_*_change`, the last two publishing onto the handler's listen bus).
 */
export function registerInputTools(server: McpServer, notifier: () => ServerNotifier): void {
  registerPushTools(server);

  server.registerTool(
    'test_missing_capability',
    { description: 'Needs the sampling client capability (drives the -32021 rejection)', inputSchema: z.object({}) },
    async (_args, ctx) => {
      if (ctx.mcpReq.inputResponses?.llm_answer === undefined) {
        return inputRequired({
          inputRequests: {
            llm_answer: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'Reply with the single word: pong' } }],
              maxTokens: 16,
            }),
          },
        });
      }
      return text('sampling round-trip complete');
    },
  );
  server.registerTool(
    'test_streaming_elicitation',
    { description: 'A plain result: its stream must carry no independent JSON-RPC request', inputSchema: z.object({}) },
    async () => text('stream observed: result frames only'),
  );
  server.registerTool(
    'test_logging_tool',
    { description: 'Logs through ctx.mcpReq.log, delivered only when _meta.logLevel asks', inputSchema: z.object({}) },
    async (_args, ctx) => {
      await ctx.mcpReq.log('info', 'test_logging_tool ran');
      return text('logged through the request-scoped channel');
    },
  );
  server.registerTool(
    'test_trigger_tool_change',
    { description: 'Publishes notifications/tools/list_changed to open listen streams', inputSchema: z.object({}) },
    async () => {
      notifier().toolsChanged();
      return text('tools_list_changed published');
    },
  );
  server.registerTool(
    'test_trigger_prompt_change',
    { description: 'Publishes notifications/prompts/list_changed to open listen streams', inputSchema: z.object({}) },
    async () => {
      notifier().promptsChanged();
      return text('prompts_list_changed published');
    },
  );

  registerInputRequiredTools(server);
}

function registerPushTools(server: McpServer): void {
  server.registerTool(
    'test_sampling',
    { description: 'Asks the client for an LLM completion', inputSchema: z.object({ prompt: z.string() }) },
    async ({ prompt }, ctx) => {
      const result = (await ctx.mcpReq.send({
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
      })) as { content?: { text?: string } };
      return text(`LLM response: ${result.content?.text ?? 'No response'}`);
    },
  );
  const elicit = (name: string, description: string, message: string, properties: Record<string, unknown>, required: string[]) =>
    server.registerTool(name, { description, inputSchema: z.object({ message: z.string().optional() }) }, async (args, ctx) => {
      const result = (await ctx.mcpReq.send({
        method: 'elicitation/create',
        params: { message: args.message ?? message, requestedSchema: { type: 'object', properties, required } },
      })) as { action?: string; content?: unknown };
      return text(`User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
    });
  elicit('test_elicitation', 'Asks the user for one string', 'Please respond', { response: { type: 'string', description: "User's response" } }, ['response']);
  elicit(
    'test_elicitation_sep1034_defaults',
    'Elicits a form whose fields carry defaults (SEP-1034)',
    'Please review and update the form fields with defaults',
    {
      name: { type: 'string', description: 'User name', default: 'John Doe' },
      age: { type: 'integer', description: 'User age', default: 30 },
      score: { type: 'number', description: 'User score', default: 95.5 },
      status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
      verified: { type: 'boolean', description: 'Verification status', default: true },
    },
    [],
  );
  const choice = (prefix: string, titles: string[]) => titles.map((title, i) => ({ const: `${prefix}${i + 1}`, title }));
  elicit(
    'test_elicitation_sep1330_enums',
    'Elicits the five enum schema variants (SEP-1330)',
    'Please select options from the enum fields',
    {
      untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
      titledSingle: { type: 'string', description: 'Select one option with titles', oneOf: choice('value', ['First Option', 'Second Option', 'Third Option']) },
      legacyEnum: {
        type: 'string',
        description: 'Select one option (legacy)',
        enum: ['opt1', 'opt2', 'opt3'],
        enumNames: ['Option One', 'Option Two', 'Option Three'],
      },
      untitledMulti: {
        type: 'array',
        description: 'Select multiple options',
        minItems: 1,
        maxItems: 3,
        items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
      },
      titledMulti: {
        type: 'array',
        description: 'Select multiple options with titles',
        minItems: 1,
        maxItems: 3,
        items: { anyOf: choice('value', ['First Choice', 'Second Choice', 'Third Choice']) },
      },
    },
    [],
  );
}

function registerInputRequiredTools(server: McpServer): void {
  const tool = (name: string, description: string, run: (ctx: ServerContext) => Promise<CallToolResult | InputRequiredResult>) =>
    server.registerTool(name, { description, inputSchema: z.object({}) }, (_args, ctx) => run(ctx));

  tool('test_input_required_result_elicitation', 'Asks for the caller name in-band (elicitation)', async (ctx) => {
    const name = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'user_name')?.name;
    if (typeof name !== 'string') return inputRequired({ inputRequests: { user_name: askName() } });
    return text(`Hello, ${name}!`);
  });

  tool('test_input_required_result_sampling', 'Asks for an LLM completion in-band (sampling)', async (ctx) => {
    const answer = ctx.mcpReq.inputResponses?.capital_question as { content?: { text?: string } } | undefined;
    if (answer === undefined) {
      return inputRequired({
        inputRequests: {
          capital_question: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
            maxTokens: 100,
          }),
        },
      });
    }
    return text(`Sampling response: ${answer.content?.text ?? JSON.stringify(answer)}`);
  });

  tool('test_input_required_result_list_roots', 'Asks for the client roots in-band', async (ctx) => {
    const roots = (ctx.mcpReq.inputResponses?.client_roots as { roots?: Array<{ uri?: string }> } | undefined)?.roots;
    if (!Array.isArray(roots)) return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    return text(`Client exposed ${roots.length} root(s): ${roots.map((root) => root.uri).join(', ')}`);
  });

  tool('test_input_required_result_request_state', 'Round-trips sealed requestState with a confirmation', async (ctx) => {
    if (acceptedContent<{ ok: boolean }>(ctx.mcpReq.inputResponses, 'confirm') === undefined) {
      return inputRequired({
        inputRequests: { confirm: askConfirm() },
        requestState: await requestStateCodec.mint({ tool: 'request_state', nonce: randomUUID() }),
      });
    }
    if (ctx.mcpReq.requestState<State>() === undefined) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid requestState: missing or failed verification');
    }
    return text('state-ok: requestState verified and confirmation received');
  });

  tool('test_input_required_result_multiple_inputs', 'Asks for elicitation, sampling and roots in one round', async (ctx) => {
    const responses = ctx.mcpReq.inputResponses;
    const name = acceptedContent<{ name: string }>(responses, 'user_name')?.name;
    const greeting = (responses?.greeting as { content?: { text?: string } } | undefined)?.content?.text;
    const roots = (responses?.client_roots as { roots?: unknown[] } | undefined)?.roots;
    if (typeof name !== 'string' || typeof greeting !== 'string' || !Array.isArray(roots)) {
      return inputRequired({
        inputRequests: {
          user_name: askName(),
          greeting: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
            maxTokens: 50,
          }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await requestStateCodec.mint({ tool: 'multiple_inputs', nonce: randomUUID() }),
      });
    }
    return text(`${greeting} ${name}: ${roots.length} root(s) visible`);
  });

  // The round number lives in the sealed state: the modern path keeps nothing between requests.
  tool('test_input_required_result_multi_round', 'Two elicitation rounds with evolving requestState', async (ctx) => {
    const state = ctx.mcpReq.requestState<State>();
    const round = state?.tool === 'multi_round' && typeof state.round === 'number' ? state.round : 0;
    if (round === 0) {
      return inputRequired({
        inputRequests: { step1: askName('Step 1: What is your name?') },
        requestState: await requestStateCodec.mint({ tool: 'multi_round', round: 1, nonce: randomUUID() }),
      });
    }
    if (round === 1) {
      const name = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'step1')?.name ?? 'unknown';
      return inputRequired({
        inputRequests: {
          step2: inputRequired.elicit({
            message: 'Step 2: What is your favorite color?',
            requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
          }),
        },
        requestState: await requestStateCodec.mint({ tool: 'multi_round', round: 2, name, nonce: randomUUID() }),
      });
    }
    const color = acceptedContent<{ color: string }>(ctx.mcpReq.inputResponses, 'step2')?.color ?? 'unknown';
    return text(`Multi-round complete: ${String(state?.name ?? 'unknown')} likes ${color}`);
  });

  tool('test_input_required_result_tampered_state', 'Refuses retries whose requestState fails verification', async (ctx) => {
    if (ctx.mcpReq.requestState() !== undefined && acceptedContent(ctx.mcpReq.inputResponses, 'confirm') !== undefined) {
      return text('integrity-ok: requestState verified');
    }
    return inputRequired({
      inputRequests: { confirm: askConfirm() },
      requestState: await requestStateCodec.mint({ tool: 'tampered_state', nonce: randomUUID() }),
    });
  });

  // Asks only for the input kinds the request's declared client capabilities cover.
  tool('test_input_required_result_capabilities', 'Requests only input kinds the client declared', async (ctx) => {
    if (ctx.mcpReq.inputResponses !== undefined) return text('Capability-aware input requests fulfilled');
    // The published typings declare the envelope as `{}`; its client-capabilities key holds ClientCapabilities.
    const envelope = ctx.mcpReq.envelope as Record<string, ClientCapabilities | undefined> | undefined;
    const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY];
    const inputRequests: InputRequests = {};
    if (declared?.elicitation !== undefined) inputRequests.user_name = askName();
    if (declared?.sampling !== undefined) {
      inputRequests.greeting = inputRequired.createMessage({
        messages: [{ role: 'user', content: { type: 'text', text: 'Generate a short greeting' } }],
        maxTokens: 50,
      });
    }
    if (declared?.roots !== undefined) inputRequests.client_roots = inputRequired.listRoots();
    if (Object.keys(inputRequests).length === 0) return text('No declared client capability supports an in-band input request');
    return inputRequired({ inputRequests });
  });
}
