/**
 * `node --import ./scripts/register-ts.mjs <file.ts>`: runs the project's TypeScript (scripts/ts-hooks.mjs),
 * with stack traces mapped back to the `.ts` lines.
 */
import { register } from 'node:module';

process.setSourceMapsEnabled(true);
register('./ts-hooks.mjs', import.meta.url);
