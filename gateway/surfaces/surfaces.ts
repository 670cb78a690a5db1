import type { Surface } from '../ports.ts';
import { compactSurface } from './compact.ts';
import { fullSurface } from './full.ts';

/**
 * The MCP endpoints the gateway mounts, each at its `path`, each with its own createMcpHandler over
 * the same per-request factory: `/mcp` (the whole visible catalogue) and `/mcp/compact` (progressive
 * discovery; left out when `compact.enabled` is false).
 */
export const surfaces: readonly Surface[] = [fullSurface, compactSurface];
