/** Canonical form of a resource URI (MCP 2026-07-28 "Canonical Server URI"): lowercase scheme and host, no trailing slash, no fragment. */
export function canonicalResource(value: string): string | undefined {
  const url = URL.parse(value);
  if (!url || url.hash || value.includes('#') || !/^https?:$/.test(url.protocol)) return undefined;
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}${url.search}`;
}
