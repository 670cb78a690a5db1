import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';

/** What one upstream listed: its resources and resource templates. */
export interface ResourceListing {
  readonly upstream: string;
  readonly resources: readonly { uri?: unknown }[];
  readonly templates: readonly { uriTemplate?: unknown }[];
}

/**
 * Why `uri` is no URI a request may name, or undefined: a control character (U+0000-U+001F, U+007F)
 * anywhere, or a space at either end. RFC 3986 §2 (and RFC 3987's IRIs) allow neither, and the WHATWG URL
 * parser most servers read a URI with (the SDK's `new URL(uri)`) drops them, tabs and line breaks
 * anywhere, so the text the gateway routes and checks ("\tui://view" is no `ui://` view) and the URI the
 * upstream serves ("ui://view") would differ (security try-out: a hidden tool's view read that way).
 * A `ui://` view (MCP Apps), which the gateway checks against the views of the tools the caller may use,
 * must also be what that parser makes of it: `ui://notes/../admin-view`, `ui://notes/%2e%2e/admin-view`,
 * `ui://notes:/view` and `UI://view` read as other views than they spell (review). Other URIs keep their
 * spelling (a space inside one, which sloppy servers list): the gateway routes them by upstream, and a
 * spelling the upstream reads as another of its own resources reaches nothing the caller could not. Pure.
 */
export function uriProblem(uri: string): string | undefined {
  const control = /[\u0000-\u001f\u007f]/.exec(uri);
  if (control)
    return `is not a URI: it holds the control character U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} at ${control.index} (RFC 3986 §2)`;
  if (/^ | $/.test(uri)) return 'is not a URI: it begins or ends with a space (RFC 3986 §2)';
  if (/^ui:/i.test(uri)) {
    let parsed: string;
    try {
      parsed = new URL(uri).href;
    } catch {
      return 'is not a URI a URL parser reads (a ui:// view must be one)';
    }
    if (parsed !== uri) return `is a ui:// view spelt as no URL parser keeps it: read as ${parsed.slice(0, 200)}`;
  }
  return undefined;
}

/**
 * The upstream that serves `uri`, from what the upstreams listed: the one listing the exact URI, else
 * the one whose resource template matches it (RFC 6570 expressions as wildcards; a template given
 * verbatim, as completion/complete's `ref/resource` does, matches itself), else the only upstream using
 * the URI's scheme, except for a `ui://` view (MCP Apps): one no upstream lists is routed by the tools that
 * link it, for a caller that may use one (upstream-set.ts; review: listing one view let every unlisted view
 * of that upstream, a hidden tool's too, through by scheme). Undefined when none or several qualify: the
 * caller answers "Resource not found" (-32602, spec 2026-07-28 server/resources §Error Handling). Pure.
 */
export function resourceOwner(uri: string, listings: readonly ResourceListing[]): string | undefined {
  const exact = listings.find((l) => l.resources.some((r) => r.uri === uri) || l.templates.some((t) => t.uriTemplate === uri));
  if (exact) return exact.upstream;
  const byTemplate = listings.filter((l) => l.templates.some((t) => typeof t.uriTemplate === 'string' && templatePattern(t.uriTemplate).test(uri)));
  if (byTemplate.length === 1) return byTemplate[0]!.upstream;
  const scheme = schemeOf(uri);
  if (!scheme || scheme === 'ui') return undefined;
  const byScheme = listings.filter(
    (l) =>
      l.resources.some((r) => typeof r.uri === 'string' && schemeOf(r.uri) === scheme) ||
      l.templates.some((t) => typeof t.uriTemplate === 'string' && schemeOf(t.uriTemplate) === scheme),
  );
  return byScheme.length === 1 ? byScheme[0]!.upstream : undefined;
}

/**
 * The URIs more than one of `listings` lists as a resource, each with the upstreams listing it (config order, as
 * given), in the order first met. A read of one goes to the first of them ({@link resourceOwner}), and stays
 * with it while it is down: the others' copies are never read in its place. Pure.
 */
export function sharedUris(listings: readonly Pick<ResourceListing, 'upstream' | 'resources'>[]): { uri: string; upstreams: string[] }[] {
  const owners = new Map<string, string[]>();
  for (const { upstream, resources } of listings) {
    for (const { uri } of resources) {
      if (typeof uri !== 'string') continue;
      const listing = owners.get(uri);
      if (!listing) owners.set(uri, [upstream]);
      else if (!listing.includes(upstream)) listing.push(upstream);
    }
  }
  return [...owners].filter(([, upstreams]) => upstreams.length > 1).map(([uri, upstreams]) => ({ uri, upstreams }));
}

/**
 * `items` (a merged resources/list, upstreams in config order) with each URI's first entry only: the one a read of
 * it reaches ({@link resourceOwner}). Items without a string `uri` pass as they are. Pure.
 */
export function firstPerUri<T extends { item: unknown }>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  return items.filter(({ item }) => {
    const uri = (item as { uri?: unknown } | null)?.uri;
    if (typeof uri !== 'string') return true;
    if (seen.has(uri)) return false;
    seen.add(uri);
    return true;
  });
}

/**
 * `{var}` matches one path segment; `{+var}`, `{#var}` and other operators match anything. Run on RE2
 * (re2js), in time linear in the URI: the template is an upstream's, and on V8's backtracking engine
 * `x://{a}{b}{c}{d}{e}{f}/z` against a long URI held the event loop (review).
 */
function templatePattern(template: string): RE2JS {
  let compiled = templates.get(template);
  if (compiled === undefined) {
    const parts = template.split(/(\{[^}]*\})/);
    const source = parts
      .map((part) => (part.startsWith('{') && part.endsWith('}') ? (/^\{[A-Za-z0-9_.,%]+\}$/.test(part) ? SEGMENT : ANYTHING) : RE2JS.quote(part)))
      .join('');
    compiled = RE2JS.compile(`^${source}$`);
    templates.set(template, compiled);
  }
  return compiled;
}

/** Compiled templates, by template text (a template is compiled once, not per request); the least recently used go past 10,000. */
const templates = new LRUCache<string, RE2JS>({ max: 10_000 });
const SEGMENT = '[^/?#]*';
/** What V8's `.*` matched: anything but a line terminator (RE2's `.` takes \r, U+2028 and U+2029). */
const ANYTHING = '[^\\n\\r\\x{2028}\\x{2029}]*';

function schemeOf(uri: string): string | undefined {
  return /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase();
}
