import { createHmac, timingSafeEqual } from 'node:crypto';
import { shownName } from '../../checks/invisible-text.ts';
import type { Context } from 'koa';
import { bodyParser } from '@koa/bodyparser';
import type Provider from 'oidc-provider';
import type { GatewayConfig } from '../../../config/types.ts';
import type { AuthDecision } from '../../obs/audit.ts';
import { loggableUrl, type Logger } from '../../obs/log.ts';
import { KNOWN_ADDRESS_SECONDS, knownAddressKey, signInCharges } from '../attempt-budgets.ts';
import type { RateLimiter } from '../../store/rate-limiter.ts';
import type { AuthDecisions } from '../decisions.ts';
import type { ScopeResult } from '../scope-cache.ts';
import { adapterLifetimes, promoteClient } from './adapter.ts';
import type { GrantCredentials } from './grant-credential.ts';
import { unwrapCredential, wrap, type OAuthKeys } from './keys.ts';
import { consentPage, errorPage, signInPage, tooManyAttemptsPage, unavailablePage, type ClientView, type ScopeChoice } from './pages.ts';
import { INTERACTION_PREFIX, pathPrefix } from './paths.ts';
import type { ResourceSet } from './resource-url.ts';
import { storeUnavailable, type OAuthStore } from './store.ts';

const PENDING_CONTEXT = 'pending-sign-in';

interface PendingSignIn {
  accountId: string;
  headers: Record<string, string>;
  scopes: string[];
}

export interface InteractionDeps {
  provider: Provider;
  gateway: Pick<GatewayConfig, 'oauth' | 'rateLimits' | 'credentials'>;
  issuer: string;
  store: OAuthStore;
  keys: OAuthKeys;
  credentials: GrantCredentials;
  resources: ResourceSet;
  supported: readonly string[];
  log: Logger;
  limiter: RateLimiter;
  decide: AuthDecisions;
  /** What the gateway's credential sources say of a key + secret (BuiltinDeps.lookupScopes). */
  lookupScopes(headers: Record<string, string>): Promise<ScopeResult>;
}

/** What an HTTP field value may hold (RFC 9110 §5.5: visible characters, spaces and tabs, and obs-text). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/**
 * The pages of one authorization (`/oauth/interaction/<uid>`, where oidc-provider sends the browser):
 * GET shows the sign-in page, then, once signed in, the consent page; POST `login` checks a key and
 * secret with the gateway's credential sources, POST `consent` records the grant (only scopes the key
 * holds and the user left ticked), POST `abort` ends the authorization with `access_denied`. Every
 * form carries a CSRF token bound to the interaction, and a form posted from another Origin is refused.
 * The credential entered is kept wrapped (AES-256-GCM) in the store until consent, then wrapped into the
 * grant's record; it is never rendered, logged or sent to the client.
 *
 * Guessing is bounded before anything is checked (policy/rate-limits.ts `signInCharges`): each attempt
 * spends a point of the page's own budget (5; then the authorization ends with access_denied) and of
 * the key's, the client's and the address's (`rateLimits.signIns`, shared through Redis); over one, the
 * page says when to try again (429, Retry-After) and the key is not checked. A right key and secret give
 * their points back, and make the address known to the key for 30 days: from there the key's budget is
 * not spent, so guesses naming the key elsewhere do not lock out its owner. The refusal never says
 * whether the key or the secret was wrong. While the store is unreachable (store.ts OAuthStoreUnavailable)
 * every page answers 503 with Retry-After, saying to wait and reload: the sign-in has not expired, and the
 * same page and form work once the store is back.
 */
export function interactionRoute(deps: InteractionDeps): (ctx: Context) => Promise<void> {
  const { provider, gateway, issuer, store, keys, credentials, resources, supported, log, limiter, decide } = deps;
  const config = gateway.oauth;
  const keyHeader = gateway.credentials.keyHeader.toLowerCase();
  const secretHeader = gateway.credentials.secretHeader.toLowerCase();
  const parseForm = bodyParser({ enableTypes: ['form'], formLimit: '16kb', encoding: 'utf-8' });
  const csrfToken = (key: Buffer, uid: string) => createHmac('sha256', key).update(`csrf:${uid}`).digest('base64url');
  // A page rendered before a token secret rotation carries a token under the previous key.
  const csrfMatches = (presented: string, uid: string) =>
    [keys.csrf, ...(keys.previous ? [keys.previous.csrf] : [])].some((key) => constantTimeEqual(presented, csrfToken(key, uid)));
  const accountIdFor = (keyId: string) => `acct_${createHmac('sha256', keys.credential).update(`account:${keyId}`).digest('base64url').slice(0, 22)}`;

  async function loadPending(key: string, uid: string): Promise<PendingSignIn | undefined> {
    const blob = await store.get(key);
    return blob ? unwrapCredential<PendingSignIn>(keys, blob, `${PENDING_CONTEXT}:${uid}`) : undefined;
  }

  async function finish(ctx: Context, result: Record<string, unknown>): Promise<void> {
    ctx.respond = false;
    for (const [name, value] of Object.entries(ctx.response.headers)) if (value !== undefined) ctx.res.setHeader(name, value as string);
    await provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
  }

  /**
   * The scopes to offer: what the client asked for, marked by whether the key holds each. Never more: a request
   * naming no scope was given its default before it got here (routes.ts); falling back to every supported scope
   * offered, pre-ticked, scopes nobody asked for (try-out).
   */
  function scopeChoices(requested: string[], held: readonly string[]): ScopeChoice[] {
    const holds = new Set(held);
    return requested.map((scope) => ({
      scope,
      available: holds.has(scope),
      ...(config.scopeDescriptions[scope] ? { description: config.scopeDescriptions[scope] } : {}),
    }));
  }

  /** A form post from another origin is refused even before the CSRF token is checked (no Origin: older agents; the token decides). */
  function sameOrigin(ctx: Context): boolean {
    const origin = ctx.get('origin');
    return !origin || origin === new URL(issuer).origin;
  }

  // A store outage is no expiry: the same page or form works once the store answers again (503, Retry-After).
  let lastLogged = 0;
  return async (ctx) => {
    try {
      await handle(ctx);
    } catch (error) {
      const unavailable = storeUnavailable(error);
      if (!unavailable || ctx.res.headersSent) throw error;
      if (Date.now() - lastLogged > 1000) {
        lastLogged = Date.now();
        log.warn({ err: unavailable.message }, 'sign-in page: store unreachable; answered 503');
      }
      const action = ctx.path.slice(INTERACTION_PREFIX.length).split('/')[1];
      decide({
        requestId: ctx.state.requestId as string | undefined,
        endpoint: action === 'consent' ? 'consent' : 'sign_in',
        outcome: 'refused',
        reason: 'temporarily_unavailable',
      });
      ctx.respond = true;
      ctx.set('retry-after', String(unavailable.retryAfterSeconds));
      page(ctx, 503, unavailablePage(unavailable.retryAfterSeconds));
    }
  };

  async function handle(ctx: Context): Promise<void> {
    const [uid, action] = ctx.path.slice(INTERACTION_PREFIX.length).split('/');
    if (!uid || !/^[A-Za-z0-9_-]{1,64}$/.test(uid)) return page(ctx, 404, errorPage('Not found', 'This sign-in link is not valid.'));
    let details: Awaited<ReturnType<Provider['interactionDetails']>>;
    try {
      details = await provider.interactionDetails(ctx.req, ctx.res);
    } catch (error) {
      if (storeUnavailable(error)) throw error;
      return page(ctx, 400, errorPage('Sign-in expired', 'This sign-in page has expired or was opened in another browser.'));
    }
    if (details.uid !== uid) return page(ctx, 400, errorPage('Sign-in expired', 'This sign-in page has expired or was opened in another browser.'));
    const client = await provider.Client.find(String(details.params.client_id));
    if (!client) return page(ctx, 400, errorPage('Unknown application', 'The application asking for access is not registered.'));
    const view = clientView(client, String(details.params.redirect_uri ?? ''));
    const csrf = csrfToken(keys.csrf, uid);
    // The URL the browser uses (with the issuer's path prefix); ctx.path is what reached the gateway.
    const base = `${pathPrefix(issuer)}${INTERACTION_PREFIX}${uid}`;
    const pendingKey = `pending-sign-in:${uid}`;
    const resource = resources.shown(details.params.resource);
    const requested = String(details.params.scope ?? '')
      .split(' ')
      .filter((s) => s && supported.includes(s));
    const decided = (decision: Omit<AuthDecision, 'requestId' | 'client'>) =>
      decide({ requestId: ctx.state.requestId as string | undefined, client: client.clientId, address: ctx.ip, ...decision });
    const signIn = (status: number, error?: string) =>
      page(ctx, status, signInPage({ action: `${base}/login`, abortAction: `${base}/abort`, csrf, client: view, serviceName: config.serviceName, error }));
    const consent = (status: number, pending: PendingSignIn, error?: string) =>
      page(
        ctx,
        status,
        consentPage({
          action: `${base}/consent`,
          csrf,
          client: view,
          serviceName: config.serviceName,
          resource,
          scopes: scopeChoices(requested, pending.scopes),
          error,
        }),
      );

    if (ctx.method === 'GET' && action === undefined) {
      const pending = await loadPending(pendingKey, uid);
      return pending ? consent(200, pending) : signIn(200);
    }
    if (ctx.method !== 'POST' || !['login', 'consent', 'abort'].includes(action ?? ''))
      return page(ctx, 405, errorPage('Not allowed', 'This page only accepts the sign-in form.'));

    await parseForm(ctx, async () => {});
    const form = (ctx.request as { body?: Record<string, string | string[]> }).body ?? {};
    if (!sameOrigin(ctx) || !csrfMatches(String(form.csrf ?? ''), uid)) {
      return page(ctx, 403, errorPage('Request refused', 'The form was not submitted from this sign-in page. Start again from your application.'));
    }
    if (action === 'abort') {
      decided({ endpoint: 'consent', outcome: 'refused', reason: 'access_denied' });
      return finish(ctx, { error: 'access_denied', error_description: 'The user cancelled the sign-in' });
    }

    if (action === 'login') {
      const key = String(form.key ?? '').trim();
      const secret = String(form.secret ?? '');
      if (!key || !secret || key.length > 256 || secret.length > 1024) return signIn(400, 'Enter your API key and secret.');
      const account = accountIdFor(key);
      const known = knownAddressKey(account, ctx.ip);
      // Spent before the key is checked, atomically (Redis INCR): concurrent guesses cannot all slip through.
      const [onPage, ...others] = signInCharges(gateway.rateLimits, {
        account,
        client: client.clientId,
        address: ctx.ip,
        page: uid,
        pageTtlMs: config.interactionTtlSeconds * 1000,
        knownAddress: (await store.get(known)) !== undefined,
      });
      const pageBudget = await limiter.consume([onPage!]);
      if (!pageBudget.ok) {
        decided({ endpoint: 'sign_in', outcome: 'refused', reason: 'rate_limited', budget: pageBudget.budget, account });
        return finish(ctx, { error: 'access_denied', error_description: 'Too many failed sign-in attempts' });
      }
      const budgets = await limiter.consume(others);
      if (!budgets.ok) {
        await limiter.refund([onPage!]);
        decided({ endpoint: 'sign_in', outcome: 'refused', reason: 'rate_limited', budget: budgets.budget, account });
        const seconds = Math.max(1, Math.ceil(budgets.retryAfterMs / 1000));
        ctx.set('retry-after', String(seconds));
        return page(ctx, 429, tooManyAttemptsPage(config.serviceName, seconds));
      }
      const headers = { [keyHeader]: key, [secretHeader]: secret };
      // A key or secret no HTTP header can carry (a character past U+00FF, a control character) is no valid
      // one: not valid, rather than "could not be checked, try again" when the lookup's fetch refused it (try-out).
      const sendable = HEADER_VALUE.test(key) && HEADER_VALUE.test(secret);
      const result = sendable
        ? await deps.lookupScopes(headers).catch((): ScopeResult => ({ kind: 'unknown', reason: 'error' }))
        : ({ kind: 'unauthorized' } as const);
      if (result.kind === 'unauthorized') {
        decided({ endpoint: 'sign_in', outcome: 'refused', reason: 'invalid_credentials', account });
        log.info({ client: loggableUrl(client.clientId) }, 'sign-in refused: credential not accepted');
        // The page's last attempt: the authorization ends (a new one costs the client's PKCE and registered redirect URI again).
        if (pageBudget.remaining === 0) return finish(ctx, { error: 'access_denied', error_description: 'Too many failed sign-in attempts' });
        return signIn(401, 'The API key or secret is not valid.');
      }
      await limiter.refund([onPage!, ...others]);
      if (result.kind !== 'scopes') {
        decided({ endpoint: 'sign_in', outcome: 'refused', reason: 'scopes_unavailable', account });
        log.warn({ client: loggableUrl(client.clientId), reason: result.reason }, 'sign-in could not check the credential');
        ctx.set('retry-after', '5');
        return signIn(503, 'Your key could not be checked right now. Try again in a moment.');
      }
      const pending: PendingSignIn = { accountId: account, headers, scopes: [...result.scopes] };
      await store.set(pendingKey, wrap(keys.credential, pending, `${PENDING_CONTEXT}:${uid}`), config.interactionTtlSeconds, 'bounded');
      // Where the key's owner signs in, guesses spread elsewhere no longer lock them out (attempt-budgets.ts).
      // Best effort: the sign-in succeeded either way, and without the mark the key's budget applies as before.
      await store.set(known, '1', KNOWN_ADDRESS_SECONDS, 'bounded').catch((error: unknown) => {
        log.warn({ err: (error as Error).message }, 'sign-in: the address could not be remembered for the key; its budget applies there');
      });
      decided({ endpoint: 'sign_in', outcome: 'ok', account });
      log.info({ client: loggableUrl(client.clientId), account }, 'signed in');
      ctx.status = 303;
      ctx.redirect(base);
      return;
    }

    // consent
    const pending = await loadPending(pendingKey, uid);
    if (!pending) return page(ctx, 400, errorPage('Sign-in expired', 'Sign in again from your application.'));
    if (form.decision !== 'allow') {
      await store.delete(pendingKey);
      decided({ endpoint: 'consent', outcome: 'refused', reason: 'access_denied', account: pending.accountId });
      return finish(ctx, { error: 'access_denied', error_description: 'The user denied access' });
    }
    const offered = scopeChoices(requested, pending.scopes)
      .filter((s) => s.available)
      .map((s) => s.scope);
    // A key holding none of what was asked has nothing to choose from (its page offers no Allow): the client hears access_denied.
    if (offered.length === 0) {
      await store.delete(pendingKey);
      decided({ endpoint: 'consent', outcome: 'refused', reason: 'access_denied', account: pending.accountId });
      return finish(ctx, { error: 'access_denied', error_description: 'The signed-in key holds none of the requested permissions' });
    }
    const ticked = new Set((Array.isArray(form.scope) ? form.scope : form.scope ? [form.scope] : []).map(String));
    const granted = offered.filter((s) => ticked.has(s));
    if (granted.length === 0) return consent(400, pending, 'Choose at least one permission, or deny access.');
    const grant = new provider.Grant({ accountId: pending.accountId, clientId: client.clientId });
    // Keyed by the indicator exactly as requested (oidc-provider's key); unticked and unavailable scopes are
    // recorded as rejected, so the consent check is satisfied with the narrower grant.
    const rejected = requested.filter((s) => !granted.includes(s));
    for (const indicator of resources.requested(details.params.resource)) {
      grant.addResourceScope(indicator, granted.join(' '));
      if (rejected.length) grant.rejectResourceScope(indicator, rejected.join(' '));
    }
    const oidcScopes = String(details.params.scope ?? '')
      .split(' ')
      .filter((s) => s === 'openid' || s === 'offline_access');
    grant.addOIDCScope([...oidcScopes, ...granted].join(' '));
    if (rejected.length) grant.rejectOIDCScope(rejected.join(' '));
    const grantId = await grant.save();
    // Kept an access token's life past the grant (adapter.ts markTtlSeconds): sealed-tokens.ts honours a token only while it is held.
    await credentials.save(grantId, { headers: pending.headers }, adapterLifetimes(config).markTtlSeconds + config.refreshTokenTtlSeconds);
    await store.delete(pendingKey);
    // An authorization completed: the client is kept (idleTtlSeconds), out of reach of the store's eviction.
    await promoteClient(store, client.clientId, config.clients.idleTtlSeconds);
    decided({ endpoint: 'consent', outcome: 'ok', account: pending.accountId });
    log.info({ client: loggableUrl(client.clientId), account: pending.accountId, scopes: granted }, 'access granted');
    return finish(ctx, { login: { accountId: pending.accountId, remember: false }, consent: { grantId } });
  }
}

function clientView(client: { clientId: string; clientName?: string; redirectUris?: readonly string[] }, redirectUri: string): ClientView {
  const hostOf = (uri: string) => URL.parse(uri)?.host ?? uri;
  const uris = client.redirectUris ?? [];
  const isLoopback = (uri: string) => /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(URL.parse(uri)?.hostname ?? '');
  const target = redirectUri || uris[0] || '';
  const url = URL.parse(target);
  // A native client's private-use scheme (RFC 8252 §7.1: `cursor://`, `x-https://claude.ai/...`) opens whatever app
  // claims it: its "host" is text the client chose, so the page shows the whole URI and says so (review).
  const appScheme = url && url.protocol !== 'https:' && url.protocol !== 'http:' ? url.protocol.slice(0, -1) : undefined;
  return {
    // A self-declared name: shown without invisible characters (a U+202E override spells "Google" backwards
    // as "elgooG"; zero-width ones split a name that reads as another).
    name: shownName(client.clientName ?? '') || client.clientId,
    clientId: client.clientId,
    redirectHost: appScheme ? `${url!.protocol}${url!.host ? `//${url!.host}` : ''}${url!.pathname}` : hostOf(target),
    loopbackOnly: uris.length > 0 && uris.every(isLoopback),
    ...(appScheme ? { appScheme } : {}),
  };
}

function constantTimeEqual(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function page(ctx: Context, status: number, html: string): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.body = html;
}
