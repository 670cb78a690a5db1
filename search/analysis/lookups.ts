/**
 * Lookup steps. A request that names a thing ("the lead actor of The Dark Knight", "Taylor Swift's newest
 * album") and asks about it through a tool that takes the thing's identifier (`movie_id`, an artist `id`)
 * has an unnamed first step: finding that identifier from the name, with the server's search tool
 * (`search-movie`, `search` with a `q`). Nothing in the request's words names that step. The roles are read
 * from the catalogue's schemas, never from a list of tools: a tool that requires an identifier parameter,
 * and a lookup tool, which requires a free-text query and no identifier.
 */
import { STOP_WORDS } from './terms.ts';
import { splitWords } from './tokenize.ts';
import type { SearchableTool } from './tool-fields.ts';

/** Names of a free-text search parameter (lower-cased; JSON Schema property names). */
const QUERY_PARAMS: ReadonlySet<string> = new Set(['query', 'q', 'keyword', 'keywords', 'search', 'search_query', 'searchquery', 'term', 'text']);
/** Words of an identifier parameter's name or title that say it is one, not what it identifies. */
const ID_WORDS: ReadonlySet<string> = new Set(['id', 'ids', 'identifier', 'uuid', 'uri', 'key']);
/** An identifier parameter: `id`, `movie_id`, `artistId`, `track_ids` (not `paid`). */
const isIdParam = (name: string): boolean => /(?:^|[_-])ids?$/i.test(name) || /[a-z0-9](?:Ids?|IDs?)$/.test(name);

type Schema = { properties?: Record<string, unknown>; required?: unknown };

function schemaOf(tool: SearchableTool): Schema {
  const s = tool.inputSchema as Schema | undefined;
  return typeof s === 'object' && s !== null ? s : {};
}

/** The parameters `tool` requires; every parameter when its schema marks none (many catalogues converted
 *  from API specs leave `required` out, path parameters included: Spotify's `id`). */
function requiredOf(tool: SearchableTool): string[] {
  const { required, properties } = schemaOf(tool);
  if (Array.isArray(required)) return required.filter((r): r is string => typeof r === 'string');
  return typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
}

function propertyOf(tool: SearchableTool, name: string): Record<string, unknown> {
  const p = schemaOf(tool).properties?.[name];
  return typeof p === 'object' && p !== null ? (p as Record<string, unknown>) : {};
}

/**
 * What the identifiers `tool` requires identify, as lower-case words: `tv_id` -> tv, an `id` titled
 * "Spotify Artist ID" -> spotify, artist (its title, else its description's first sentence). Empty when
 * it requires no identifier.
 */
export function identifiedThings(tool: SearchableTool): string[] {
  const words: string[] = [];
  for (const name of requiredOf(tool)) {
    if (!isIdParam(name)) continue;
    let parts = splitWords(name).filter((w) => !ID_WORDS.has(w) && !w.includes('_') && !w.includes('-'));
    if (parts.length === 0) {
      const p = propertyOf(tool, name);
      const text = typeof p.title === 'string' ? p.title : typeof p.description === 'string' ? p.description.split(/[.\n]/)[0] : '';
      parts = splitWords(text).filter((w) => !ID_WORDS.has(w) && !STOP_WORDS.has(w) && !w.includes('_') && !w.includes('-'));
    }
    words.push(...parts);
  }
  return [...new Set(words)];
}

/** True for a lookup tool: it requires a free-text query parameter and no identifier. */
export function isLookup(tool: SearchableTool): boolean {
  const required = requiredOf(tool);
  return required.some((r) => QUERY_PARAMS.has(r.toLowerCase())) && !required.some(isIdParam);
}

/**
 * True for a tool that answers the current one of something: it takes no parameter and its output holds
 * an `id` (at its top, or in its one top-level record: `{data: {id}}`): the caller's own profile, the
 * latest show. Its identifier is what a tool requiring `user_id` needs when the request says "my".
 */
export function answersCurrent(tool: SearchableTool): boolean {
  const { properties } = schemaOf(tool);
  if (typeof properties === 'object' && properties !== null && Object.keys(properties).length > 0) return false;
  const out = tool.outputSchema as Schema | undefined;
  const props = typeof out === 'object' && out !== null ? out.properties : undefined;
  if (typeof props !== 'object' || props === null) return false;
  if ('id' in props) return true;
  const keys = Object.keys(props);
  const only = keys.length === 1 ? (props[keys[0]] as Schema | undefined) : undefined;
  return typeof only?.properties === 'object' && only.properties !== null && 'id' in only.properties;
}
