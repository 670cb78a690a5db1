/**
 * The console's Definition changes routes (issue 30), behind the admin token like every console route:
 * - `GET /console/pins` and `GET /console/pins/<upstream>/<tool>`: the pages (pins-page.ts);
 * - `POST /console/pins/approve` (form: `upstream`, `name`, `digest`, or one `pin` field per definition the
 *   page listed, `{"upstream","name","digest"}`): approves what was shown, then 303 back to the list;
 *   same-origin only (a browser sends the cached admin credential with any form);
 * - `GET /console/api/pins`, `GET /console/api/pins/<upstream>/<tool>`, `POST /console/api/pins/approve`
 *   (JSON `{upstream, name, digest}`, the digest required, or `{all: true}`): the same as JSON, for the `pins` CLI.
 * An approval is written to the pin store: this replica serves the new definition at once, the others
 * within a second (catalog/pin-guard.ts). The pin store unreachable: 503.
 */
import type Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Context, Middleware } from 'koa';
import type { Approver } from '../../obs/audit.ts';
import { PinStoreUnavailable } from '../../store/pin-store.ts';
import type { GatewayRuntime } from '../../runtime-state.ts';
import { pinDetail, pinReview } from '../../ops/pin-review.ts';
import { pinDetailPage, pinsPage, type PinsData } from './pins-page.ts';
import { outcomeLocation, sealedOutcome } from './outcome-link.ts';

/** What the console's router gives each page: the admin guard, the HTML responder, the origin check and the form parser. */
export interface ConsoleParts {
  guard: Middleware;
  page: (render: (ctx: Context) => Promise<string> | string) => Middleware;
  sameOrigin: Middleware;
  parseForm: Middleware;
}

const JSON_LIMIT = '16kb';

/** Mounts the Definition changes pages and their JSON API on the console's router. */
export function mountPins(router: Router, runtime: GatewayRuntime, { guard, page, sameOrigin, parseForm }: ConsoleParts): void {
  const parseJson = bodyParser({ enableTypes: ['json'], jsonLimit: JSON_LIMIT, encoding: 'utf-8' });
  const review = { pins: runtime.pins, upstreamSet: runtime.upstreamSet, upstreams: runtime.config.upstreams.map((u) => u.name) };
  const settings = () => {
    const { mode, newTools, lint, lockFile } = runtime.config.pinning;
    return { mode, newTools, lint, lockFile };
  };

  router.get(
    '/console/pins',
    guard,
    page(async (ctx) => {
      const data: PinsData = { entries: [], settings: settings(), ...notice(ctx) };
      try {
        data.entries = await pinReview(review);
      } catch (error) {
        if (!(error instanceof PinStoreUnavailable)) throw error;
        // What this process holds and serves is still known: shown as last read, so the page agrees with /readyz.
        data.entries = await pinReview(review, { fromMemory: true });
        data.error = `${error.message}: shown as this gateway last read and judged them; approvals wait until the store answers.`;
      }
      return pinsPage(data);
    }),
  );
  router.get('/console/pins/:upstream/:name', guard, async (ctx, next) => {
    const detail = await unavailableAs503(ctx, () => pinDetail(review, ctx.params.upstream!, ctx.params.name!));
    if (detail === null) return;
    if (!detail) {
      ctx.status = 404;
      ctx.body = 'No pin or waiting change of that tool.';
      return;
    }
    return page(() => pinDetailPage(detail))(ctx, next);
  });
  router.post('/console/pins/approve', guard, sameOrigin, parseForm, async (ctx) => {
    const form = (ctx.request as { body?: Record<string, unknown> }).body ?? {};
    if (form.pin !== undefined) {
      // "Approve all": exactly the definitions the page listed, each by the digest it showed.
      const listed = shownPins(form.pin);
      ctx.status = 303;
      if (typeof listed === 'string') return ctx.redirect(outcomeLocation('/console/pins', { refused: refusalCode(listed) }));
      const outcome = await unavailableAs503(ctx, () => approveListed(runtime, listed, approverOf(ctx, 'console')));
      if (outcome === null) return;
      return ctx.redirect(outcomeLocation('/console/pins', { approved: outcome.approved, ...(outcome.stale ? { stale: outcome.stale } : {}) }));
    }
    const request = approvalRequest(form);
    const outcome = typeof request === 'string' ? request : await unavailableAs503(ctx, () => approve(runtime, request, approverOf(ctx, 'console')));
    if (outcome === null) return;
    // The outcome travels as a code, sealed (outcome-link.ts): never as text, nor one a link could make the console show.
    const refused =
      typeof request === 'string' ? refusalCode(request) : typeof outcome === 'string' ? (outcome.startsWith('nothing') ? 'none' : 'stale') : undefined;
    ctx.status = 303;
    ctx.redirect(outcomeLocation('/console/pins', refused ? { refused } : { approved: (outcome as unknown[]).length }));
  });

  router.get('/console/api/pins', guard, async (ctx) => {
    const entries = await unavailableAs503(ctx, () => pinReview(review));
    if (entries === null) return;
    ctx.set('cache-control', 'no-store');
    ctx.body = { settings: settings(), entries };
  });
  router.get('/console/api/pins/:upstream/:name', guard, async (ctx) => {
    const detail = await unavailableAs503(ctx, () => pinDetail(review, ctx.params.upstream!, ctx.params.name!));
    if (detail === null) return;
    ctx.set('cache-control', 'no-store');
    if (!detail) {
      ctx.status = 404;
      ctx.body = { error: `no pin or waiting change of ${ctx.params.upstream}/${ctx.params.name}` };
      return;
    }
    ctx.body = detail;
  });
  router.post('/console/api/pins/approve', guard, sameOrigin, parseJson, async (ctx) => {
    const request = approvalRequest((ctx.request as { body?: unknown }).body);
    ctx.set('cache-control', 'no-store');
    if (typeof request === 'string') {
      ctx.status = 400;
      ctx.body = { error: request };
      return;
    }
    const outcome = await unavailableAs503(ctx, () => approve(runtime, request, approverOf(ctx, 'cli')));
    if (outcome === null) return;
    if (typeof outcome === 'string') {
      ctx.status = outcome.startsWith('nothing') ? 404 : 409;
      ctx.body = { error: outcome };
      return;
    }
    ctx.body = { approved: outcome };
  });
}

type ApprovalRequest = { all: true } | { upstream: string; name: string; digest: string };

/**
 * The approval asked for, or why the request is not one (a message naming the field). One tool's approval
 * names the digest of the definition reviewed (README: "An approval names what was reviewed"), as the CLI
 * and the console's buttons always send it: without one, whatever waits at that moment would be approved (review).
 */
function approvalRequest(body: unknown): ApprovalRequest | string {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'the body must be a JSON object: {"upstream", "name", "digest"} or {"all": true}';
  const b = body as Record<string, unknown>;
  if (b.all === true) return { all: true };
  if (typeof b.upstream !== 'string' || b.upstream === '') return 'upstream: a non-empty string is required (or all: true)';
  if (typeof b.name !== 'string' || b.name === '') return 'name: a non-empty string is required';
  if (b.digest === undefined)
    return 'digest: required, the waiting digest the review showed (GET /console/api/pins/UPSTREAM/NAME), so what is approved is what was reviewed';
  if (typeof b.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(b.digest)) return 'digest: must be sha256:<64 hex digits>';
  return { upstream: b.upstream, name: b.name, digest: b.digest };
}

type ShownPin = { upstream: string; name: string; digest: string };

/** The console form's `pin` fields (one or several), each the JSON the page wrote; or why they are not. */
function shownPins(field: unknown): ShownPin[] | string {
  const values = Array.isArray(field) ? field : [field];
  const pins: ShownPin[] = [];
  for (const value of values) {
    let parsed: unknown;
    try {
      parsed = typeof value === 'string' ? JSON.parse(value) : undefined;
    } catch {
      return 'pin: not JSON';
    }
    const request = approvalRequest(parsed);
    if (typeof request === 'string' || 'all' in request || !request.digest) return 'pin: {"upstream","name","digest"} expected';
    pins.push({ upstream: request.upstream, name: request.name, digest: request.digest });
  }
  return pins;
}

/** How long an approval waits for the upstream's tools/list asked again ({@link refetchBeforeApproval}), ms. */
const APPROVAL_REFETCH_MS = 5_000;

/**
 * Asks `upstream`'s tools/list again before an approval of one of its definitions: a definition it changed
 * again since the one shown is judged, and the approval of the one shown answers "changed since it was shown"
 * (upstream try-out: approved, it was served, the upstream's newer definition with it, until the next
 * refresh held that one up to its TTL later). Bounded: an upstream that does not answer within
 * {@link APPROVAL_REFETCH_MS} leaves the gateway's last view to approve, as before.
 */
async function refetchBeforeApproval(runtime: GatewayRuntime, upstream: string): Promise<void> {
  const catalog = runtime.upstreamSet.get(upstream)?.catalog;
  if (!catalog) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([catalog.refetchTools(), new Promise((resolve) => (timer = setTimeout(resolve, APPROVAL_REFETCH_MS)))]);
  clearTimeout(timer);
}

/** Approves each listed definition if it still waits with the digest shown; counts the approved and the changed-since. */
async function approveListed(runtime: GatewayRuntime, pins: readonly ShownPin[], approver: Approver): Promise<{ approved: number; stale: number }> {
  let approved = 0;
  let stale = 0;
  for (const upstream of new Set(pins.map((pin) => pin.upstream))) await refetchBeforeApproval(runtime, upstream);
  for (const pin of pins) {
    const result = await runtime.pins.approve(pin.upstream, pin.name, { digest: pin.digest, ...approver });
    if (typeof result === 'object') approved += 1;
    else if (result === 'stale') stale += 1;
  }
  return { approved, stale };
}

/** Approves what was asked: the list approved, or why nothing was (nothing waits; it changed again since it was shown). */
async function approve(runtime: GatewayRuntime, request: ApprovalRequest, approver: Approver): Promise<{ upstream: string; name: string }[] | string> {
  if ('all' in request) {
    await Promise.all(runtime.config.upstreams.map((u) => refetchBeforeApproval(runtime, u.name)));
    return runtime.pins.approveAll(
      runtime.config.upstreams.map((u) => u.name),
      approver,
    );
  }
  await refetchBeforeApproval(runtime, request.upstream);
  const result = await runtime.pins.approve(request.upstream, request.name, { digest: request.digest, ...approver });
  if (result === 'none') return `nothing waits for approval for ${request.upstream}/${request.name}`;
  if (result === 'stale')
    return `the definition waiting for ${request.upstream}/${request.name} changed since it was shown (${request.digest}); review it again`;
  return [{ upstream: request.upstream, name: request.name }];
}

/** Who approves, for the audit line: through the console's page or its API (the CLI), the request id and the client address. */
function approverOf(ctx: Context, via: 'console' | 'cli'): Approver {
  const requestId = ctx.state.requestId as string | undefined;
  return { via, ...(requestId ? { requestId } : {}), ...(ctx.ip ? { address: ctx.ip } : {}) };
}

/** `run`'s value; a pin store that cannot be reached answers 503 (null is returned: the response is written). */
async function unavailableAs503<T>(ctx: Context, run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof PinStoreUnavailable)) throw error;
    ctx.status = 503;
    ctx.set('retry-after', '5');
    ctx.body = { error: error.message };
    return null;
  }
}

const REFUSALS: Record<string, string> = {
  none: 'nothing waits for approval for that tool (approved already?).',
  stale: 'the waiting definition changed since the page was shown; review it again.',
  invalid: 'the form named no tool.',
  digest: "the form's digest is no sha256:<64 hex digits> the review shows; reload the page and approve again.",
};

/** The refusal code of a form that is no approval request (`approvalRequest`'s reason). */
function refusalCode(reason: string): string {
  return reason.startsWith('digest:') ? 'digest' : 'invalid';
}

/** The outcome line of the redirect after a form approval (sealed: outcome-link.ts). */
function notice(ctx: Context): { notice?: string; error?: string } {
  const outcome = sealedOutcome(ctx.querystring);
  const approved = outcome.has('approved') ? Number.parseInt(outcome.get('approved')!, 10) : Number.NaN;
  const stale = outcome.has('stale') ? Number.parseInt(outcome.get('stale')!, 10) : 0;
  if (Number.isInteger(approved)) {
    const done = approved === 1 ? 'Approved 1 definition.' : `Approved ${approved} definitions.`;
    if (!(stale > 0)) return { notice: done };
    return {
      notice: done,
      error: `Not approved: ${stale === 1 ? '1 definition' : `${stale} definitions`} changed since the page was shown; review ${stale === 1 ? 'it' : 'them'} again.`,
    };
  }
  const refused = Object.hasOwn(REFUSALS, String(outcome.get('refused'))) ? REFUSALS[String(outcome.get('refused'))] : undefined;
  return refused ? { error: `Not approved: ${refused}` } : {};
}
