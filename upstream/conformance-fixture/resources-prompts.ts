import type { GetPromptResult, InputRequiredResult, McpServer, ServerContext } from '@modelcontextprotocol/server';
import { acceptedContent, inputRequired, ResourceTemplate } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { PNG_BASE64 } from './content-tools.ts';

/** The `test://` resources the `resources-*` scenarios read (static text, binary, a template, a watched one). */
export function registerFixtureResources(server: McpServer): void {
  const textResource = (name: string, uri: string, title: string, body: string) =>
    server.registerResource(name, uri, { title, description: title, mimeType: 'text/plain' }, async () => ({
      contents: [{ uri, mimeType: 'text/plain', text: body }],
    }));
  textResource('static-text', 'test://static-text', 'Static Text Resource', 'This is the content of the static text resource.');
  server.registerResource(
    'static-binary',
    'test://static-binary',
    { title: 'Static Binary Resource', description: 'A PNG as a blob', mimeType: 'image/png' },
    async () => ({ contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG_BASE64 }] }),
  );
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { title: 'Resource Template', description: 'One JSON document per id', mimeType: 'application/json' },
    async (uri, { id }) => ({
      contents: [{ uri: uri.toString(), mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
    }),
  );
  textResource('watched-resource', 'test://watched-resource', 'Watched Resource', 'Watched resource content');

  // Subscriptions are a 2025 push feature; a stateless server acknowledges them and has nothing to push later.
  server.server.setRequestHandler('resources/subscribe', async () => ({}));
  server.server.setRequestHandler('resources/unsubscribe', async () => ({}));
}

/** The prompts of the `prompts-*` scenarios, plus the in-band input prompt of `input-required-result-non-tool-request`. */
export function registerFixturePrompts(server: McpServer): void {
  const userText = (text: string): GetPromptResult['messages'][number] => ({ role: 'user', content: { type: 'text', text } });

  server.registerPrompt('test_simple_prompt', { title: 'Simple Test Prompt', description: 'A prompt without arguments' }, async () => ({
    messages: [userText('This is a simple prompt for testing.')],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      title: 'Prompt With Arguments',
      description: 'A prompt with two required arguments',
      argsSchema: z.object({ arg1: z.string().describe('First test argument'), arg2: z.string().describe('Second test argument') }),
    },
    async ({ arg1, arg2 }) => ({ messages: [userText(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`)] }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      title: 'Prompt With Embedded Resource',
      description: 'A prompt embedding the named resource',
      argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
    },
    async ({ resourceUri }) => ({
      messages: [
        { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
        userText('Please process the embedded resource above.'),
      ],
    }),
  );
  server.registerPrompt('test_prompt_with_image', { title: 'Prompt With Image', description: 'A prompt with image content' }, async () => ({
    messages: [{ role: 'user', content: { type: 'image', data: PNG_BASE64, mimeType: 'image/png' } }, userText('Please analyze the image above.')],
  }));
  server.registerPrompt(
    'test_input_required_result_prompt',
    { title: 'Input-required Prompt', description: 'Asks for context in-band before rendering (SEP-2322)' },
    // Registered without argsSchema, the callback's only argument is the request context.
    (async (ctx: ServerContext): Promise<GetPromptResult | InputRequiredResult> => {
      const context = acceptedContent<{ context: string }>(ctx.mcpReq.inputResponses, 'user_context')?.context;
      if (typeof context !== 'string') {
        return inputRequired({
          inputRequests: {
            user_context: inputRequired.elicit({
              message: 'What context should the prompt use?',
              requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
            }),
          },
        });
      }
      return { messages: [userText(`Use the following context: ${context}`)] };
    }) as never,
  );
}
