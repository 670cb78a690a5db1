import { PROFILE } from './record-schemas.ts';
import { input, recordOutput } from './schema-fragments.ts';
import { READ_ONLY, type ToolDefinition } from './tool-definition.ts';

export const profileTools: ToolDefinition[] = [
  {
    name: 'get_profile',
    title: 'Get my profile',
    description:
      "Who am I: the authenticated user's profile (id, email, display name, plan, organization, base currency, timezone). Takes no " +
      'arguments. Returns {data}.',
    category: 'profile',
    requiredScopes: ['profile:read'],
    annotations: READ_ONLY,
    inputSchema: input({}),
    outputSchema: recordOutput(PROFILE),
    request: () => ({ method: 'GET', path: '/v1/profile' }),
  },
];
