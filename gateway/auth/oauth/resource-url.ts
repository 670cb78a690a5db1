/** Canonical form of a resource URI (MCP 2026-07-28 "Canonical Server URI"): lowercase scheme and host, no trailing slash, no fragment. */
export function canonicalResource(value: string): string | undefined {
  const url = URL.parse(value);
  if (!url || url.hash || value.includes('#') || !/^https?:$/.test(url.protocol)) return undefined;
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}${url.search}`;
}

const LOOPBACK_HOSTNAMES = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\])$/;

/**
 * The comparison key of a resource URI: its canonical form with a loopback host (`localhost`,
 * `127.x.x.x`, `[::1]`) written as one name, so that the spellings a local client may use for one
 * gateway name the same resource (RFC 8252 §8.3 treats them alike for redirects; a resource
 * indicator is compared the same way). Undefined when the URI is not an http(s) resource.
 */
export function resourceKey(value: string): string | undefined {
  const canonical = canonicalResource(value);
  if (!canonical) return undefined;
  const url = new URL(canonical);
  if (!LOOPBACK_HOSTNAMES.test(url.hostname)) return canonical;
  return `${url.protocol}//loopback${url.port ? `:${url.port}` : ''}${canonical.slice(url.origin.length)}`;
}

/**
 * The protected resources of one authorization server (RFC 8707): the gateway's MCP endpoints under
 * its issuer, and the issuer itself. Every rule about which resource indicator is ours reads this.
 */
export class ResourceSet {
  /** The canonical URI of each resource, by its {@link resourceKey}. */
  private readonly byKey = new Map<string, string>();
  /** The resource a request that names none is for: the first MCP endpoint. */
  readonly defaultResource: string;

  /** @param issuer - the issuer URL without a trailing slash; `paths` the MCP endpoints (`/mcp`, ...). */
  constructor(
    private readonly issuer: string,
    paths: readonly string[],
  ) {
    for (const uri of [...paths.map((p) => `${issuer}${p}`), issuer]) this.byKey.set(resourceKey(uri)!, canonicalResource(uri)!);
    this.defaultResource = canonicalResource(`${issuer}${paths[0] ?? ''}`)!;
  }

  /** The canonical URI of the resource `indicator` names, or undefined when it is none of ours. */
  resolve(indicator: string): string | undefined {
    const key = resourceKey(indicator);
    return key === undefined ? undefined : this.byKey.get(key);
  }

  /**
   * Whether a token whose audience is `audiences` may be used at `resourceUrl` (the endpoint it was
   * presented to, in the spelling of the request): its own resource, or the issuer's (a token for the whole origin).
   */
  accepts(audiences: readonly unknown[], resourceUrl: string): boolean {
    const resource = resourceKey(resourceUrl);
    if (!resource) return false;
    const issuer = resourceKey(this.issuer);
    return audiences.some((aud) => typeof aud === 'string' && (resourceKey(aud) === resource || resourceKey(aud) === issuer));
  }

  /** The indicators of an authorization request as sent (oidc-provider keys grants by them), else the default resource. */
  requested(value: unknown): string[] {
    const list = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string' && v !== '');
    return list.length ? list : [this.defaultResource];
  }

  /**
   * The resources a consent page names: every indicator requested (RFC 8707 §2 allows several, and the grant
   * covers each: a token for any of them can be asked for), canonical, joined by ", ", else the default. The
   * first alone was shown while the grant held them all (security try-out).
   */
  shown(value: unknown): string {
    const named = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string' && v !== '');
    // As resolved (two loopback spellings of one endpoint are one resource: review), else as written.
    const shown = [...new Set(named.map((v) => this.resolve(v) ?? canonicalResource(v) ?? v))];
    return shown.length ? shown.join(', ') : this.defaultResource;
  }
}
