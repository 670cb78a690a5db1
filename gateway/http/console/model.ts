/**
 * What the console's pages show, as plain data: the routes (routes.ts) read it from the running gateway,
 * the pages (pages.ts) render it. Nothing here holds a credential.
 */
import type { FieldMatch } from '../../../search/index.ts';
import type { SurfaceView } from '../../ops/credential-view.ts';

/** One configured upstream as last seen. */
export interface UpstreamStatus {
  name: string;
  transport: 'http' | 'stdio';
  /** The URL, or the command line of a stdio upstream. */
  target: string;
  state: 'idle' | 'connecting' | 'up' | 'down';
  /** When the state last changed (ms since the epoch). */
  since?: number;
  reason?: string;
  reconnects: number;
  /** Content hash of the last catalogue fetched. */
  catalogVersion?: string;
  tools?: number;
  /** When the tools catalogue was last fetched successfully (ms since the epoch). */
  lastRefresh?: number;
  lastError?: string;
}

/** One live figure (a sum over a Prometheus metric's series). */
export interface Counter {
  /** Stable id, e.g. `tool_calls_refused` (the page's element id and the JSON key). */
  id: string;
  label: string;
  value: number;
}

export interface OverviewData {
  now: number;
  readiness: { status: 'ready' | 'degraded' | 'not_ready'; reasons: string[] };
  upstreams: UpstreamStatus[];
  counters: Counter[];
  /** The merged catalogue's version and tool count, when one was fetched. */
  catalog?: { version: string; tools: number };
}

/** One tool of the merged catalogue with its policy data. */
export interface CatalogRow {
  name: string;
  upstream: string;
  title?: string;
  category?: string;
  /** Any one suffices; empty: every caller sees the tool. */
  requiredScopes: readonly string[];
  /** And any one of these too: the upstream's scopes.required over the tool's own declaration (catalog.ts floorScopes). */
  floorScopes?: readonly string[];
  readOnly: boolean;
  hasOutputSchema: boolean;
  /** Listed up front on /mcp/compact (every write, and the read anchors). */
  advertised: boolean;
}

export interface CatalogData {
  version?: string;
  rows: CatalogRow[];
  /** Several upstreams: show the upstream column. */
  several: boolean;
  /** Why there is no catalogue (no upstream answered yet). */
  error?: string;
}

/** The "what does this credential see" page: the empty form, or the views of one lookup. */
export interface CredentialData {
  /** Header names the form's fields go into. */
  keyHeader: string;
  secretHeader: string;
  bearer: boolean;
  /** After a POST: each endpoint's listing (the credential itself is never part of this), and why an endpoint refused a token another accepts. */
  views?: (SurfaceView & { explain?: string })[];
  /** After a POST: whose view it is, naming no secret (a configured key's name, a masked key id, an OAuth token's account and client). */
  whose?: string;
  /** After a POST without a usable credential. */
  error?: string;
}

export interface SearchRow {
  rank: number;
  name: string;
  score: number;
  category?: string;
  upstream?: string;
  readOnly: boolean;
  advertised: boolean;
  matched: FieldMatch[];
}

export interface SearchData {
  query: string;
  category: string;
  limit: number;
  maxLimit: number;
  categories: string[];
  /** What the operator should know about the form's values: an unknown category, a limit clamped or ignored. */
  hints: string[];
  rows?: SearchRow[];
  error?: string;
  catalogVersion?: string;
}
