import type { GatewayConfig } from '../../../config/types.ts';
import type { BuiltinDeps } from './builtin.ts';
import { createResourceServer } from './resource-server.ts';
import type { OAuth } from './types.ts';

export type { BearerResolution, OAuth } from './types.ts';
export { canonicalResource } from './resource-url.ts';

/**
 * The gateway's OAuth side from `config.oauth.mode`: `builtin` (the authorization server on the
 * gateway's origin, builtin.ts), `external` (resource server for an identity provider,
 * resource-server.ts), or undefined for `off`. The edge uses only the returned {@link OAuth}:
 * mount `routes`, list `metadata` in the RFC 9728 documents, turn a bearer token into the wrapped
 * credential + effective scopes with `resolveBearer`, `close()` on shutdown.
 * @throws Error when the mode's required settings are missing (issuer), or Redis refuses the credentials (an unreachable Redis is waited for).
 */
export async function createOAuth(config: GatewayConfig, deps: BuiltinDeps): Promise<OAuth | undefined> {
  // Loaded on demand: oidc-provider is large, and warns on stderr at import under Node 20.
  if (config.oauth.mode === 'builtin') return (await import('./builtin.ts')).createBuiltinOAuth(config, deps);
  if (config.oauth.mode === 'external') return createResourceServer(config, deps);
  return undefined;
}
