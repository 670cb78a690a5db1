import { requireScope, type PlatformState } from '../auth.ts';
import type { RouteContext } from './route-context.ts';

/**
 * GET /v1/me: who the credential is and its expanded resource scopes; any valid credential may call it
 * (it is how a gateway learns a caller's scopes). The profile fields are included only with profile:read.
 * GET /v1/profile (profile:read): the full profile record.
 */
export function profileRoutes({ router, store }: RouteContext): void {
  router.get('/v1/me', (ctx) => {
    const { principal } = ctx.state as PlatformState;
    const { id, email, display_name, plan } = store.profile;
    ctx.body = {
      id,
      key_id: principal.keyId,
      ...(principal.scopes.has('profile:read') ? { email, display_name, plan } : {}),
      scopes: [...principal.scopes],
    };
  });
  router.get('/v1/profile', requireScope('profile:read'), (ctx) => {
    ctx.body = { data: store.profile };
  });
}
