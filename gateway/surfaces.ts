import type { Surface } from './mcp-server.ts';
import { fullSurface } from './surface-full.ts';

/**
 * The MCP endpoints the gateway mounts, each at its `path`, each with its own createMcpHandler over
 * the same per-request factory. The compact surface (issue 8) is added to this list.
 */
export const surfaces: readonly Surface[] = [fullSurface];
