import { createHash, timingSafeEqual } from 'node:crypto';

/** Every resource scope the platform enforces; a route requires exactly one of them. */
export const RESOURCE_SCOPES = [
  'profile:read',
  'accounts:read',
  'connections:read',
  'connections:write',
  'strategies:read',
  'strategies:write',
  'backtests:read',
  'orders:read',
  'trade',
  'positions:read',
  'positions:write',
  'market-data:read',
  'files:read',
  'risk:read',
  'risk:write',
  'middle-office:read',
  'webhooks:read',
  'webhooks:write',
] as const;

export type ResourceScope = (typeof RESOURCE_SCOPES)[number];

/**
 * Expands granted scopes to resource scopes: `*` grants all, `<resource>:*` grants that resource's
 * scopes, anything else must be a resource scope. Unknown grants expand to nothing.
 */
export function expandScopes(granted: readonly string[]): ResourceScope[] {
  return RESOURCE_SCOPES.filter((scope) =>
    granted.some((grant) => grant === '*' || grant === scope || (grant.endsWith(':*') && scope.startsWith(grant.slice(0, -1)))),
  );
}

/** A demo credential as documented in the README (secrets and tokens are public demo values). */
export interface DemoCredential {
  keyId: string;
  secret: string;
  token: string;
  granted: string[];
}

export const DEMO_CREDENTIALS: readonly DemoCredential[] = [
  { keyId: 'cpz_demo_full', secret: 'demo-secret-full', token: 'cpz_tok_full_demo', granted: ['*'] },
  {
    keyId: 'cpz_demo_data',
    secret: 'demo-secret-data',
    token: 'cpz_tok_data_demo',
    granted: ['accounts:read', 'positions:read', 'orders:read', 'market-data:read', 'files:read', 'backtests:read'],
  },
  { keyId: 'cpz_demo_identity', secret: 'demo-secret-identity', token: 'cpz_tok_identity_demo', granted: ['profile:read'] },
];

/** A stored credential: only SHA-256 digests of the secret and token are kept. */
export interface StoredCredential {
  keyId: string;
  userId: string;
  secretDigest: Buffer;
  tokenDigest: Buffer;
  scopes: ResourceScope[];
}

export interface Principal {
  userId: string;
  keyId: string;
  scopes: ReadonlySet<ResourceScope>;
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

export function storeCredential(demo: DemoCredential, userId: string): StoredCredential {
  return {
    keyId: demo.keyId,
    userId,
    secretDigest: digest(demo.secret),
    tokenDigest: digest(demo.token),
    scopes: expandScopes(demo.granted),
  };
}

/** Raw credential material from request headers; any field may be absent. */
export interface PresentedCredential {
  key?: string;
  secret?: string;
  bearer?: string;
}

/**
 * Resolves presented credentials to a principal, comparing digests in constant time.
 * Returns undefined for unknown keys, wrong secrets and unknown tokens alike (no oracle).
 */
export function authenticate(credentials: readonly StoredCredential[], presented: PresentedCredential): Principal | undefined {
  let match: StoredCredential | undefined;
  if (presented.key !== undefined && presented.secret !== undefined) {
    const secret = digest(presented.secret);
    match = credentials.find((c) => c.keyId === presented.key && timingSafeEqual(c.secretDigest, secret));
  } else if (presented.bearer !== undefined) {
    const token = digest(presented.bearer);
    match = credentials.find((c) => timingSafeEqual(c.tokenDigest, token));
  }
  return match && { userId: match.userId, keyId: match.keyId, scopes: new Set(match.scopes) };
}
