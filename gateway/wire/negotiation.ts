/**
 * Content negotiation of an MCP POST's answer (RFC 9110 §12.5.1 Accept, §12.4.2 quality values), for
 * both eras: the gateway answers a request in one of two representations, a JSON body or an SSE stream
 * (MCP basic/transports/streamable-http §Sending Messages to the Server: the server MUST answer a
 * request with one of the two, the client MUST list both in Accept). Which one a caller gets is decided
 * here only: the edge's 406, the fast path's eligibility and the conversion of the SDK's answer
 * (http/negotiated-answer.ts) all ask {@link chooseRepresentation}. Pure (its parse of a field is remembered: {@link acceptRanges}).
 */

/** A representation the gateway can answer a request in. */
export type Representation = 'json' | 'sse';

/** Both representations by media type; each is UTF-8 (RFC 8259 §8.1, WHATWG HTML §9.2.5), so a `charset` range must name it. */
const OFFERED: readonly { readonly representation: Representation; readonly type: string; readonly subtype: string }[] = [
  { representation: 'json', type: 'application', subtype: 'json' },
  { representation: 'sse', type: 'text', subtype: 'event-stream' },
];

/** The media types as a caller must name them (the message of the 406). */
export const ANSWER_MEDIA_TYPES = 'application/json, text/event-stream';

interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  /** Parameters other than the weight, names lower-cased. */
  readonly params: ReadonlyMap<string, string>;
  /** The weight (RFC 9110 §12.4.2), 0 to 1. */
  readonly q: number;
  /** Every parameter holds for the gateway's answers: none, or only `charset` naming utf-8 (any case). */
  readonly paramsHold: boolean;
}

/** RFC 9110 §5.6.2 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** RFC 9110 §12.4.2 qvalue: 0 to 1 with at most three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** Splits on `sep` outside quoted strings (RFC 9110 §5.6.4), trimming OWS. */
function splitOutsideQuotes(value: string, sep: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (c === sep && !quoted) {
      parts.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(value.slice(start).trim());
  return parts;
}

/** One member of an Accept list (RFC 9110 §12.5.1 media-range [ weight ]), or undefined when malformed. */
function parseRange(member: string): MediaRange | undefined {
  const [range = '', ...rest] = splitOutsideQuotes(member, ';');
  const slash = range.indexOf('/');
  const type = range.slice(0, slash).toLowerCase();
  const subtype = range.slice(slash + 1).toLowerCase();
  if (slash < 0 || !TOKEN.test(type) || !TOKEN.test(subtype) || (type === '*' && subtype !== '*')) return undefined;
  const params = new Map<string, string>();
  let q = 1;
  for (const parameter of rest) {
    const eq = parameter.indexOf('=');
    const name = parameter.slice(0, eq).trim().toLowerCase();
    let value = parameter.slice(eq + 1).trim();
    if (eq < 0 || !TOKEN.test(name)) return undefined;
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1).replace(/\\(.)/g, '$1');
    if (name === 'q') {
      if (!QVALUE.test(value)) return undefined;
      q = Number(value);
      // The weight ends the media range's parameters; what follows are accept-ext, which nothing here reads.
      break;
    }
    params.set(name, value);
  }
  const paramsHold = [...params].every(([name, value]) => name === 'charset' && value.toLowerCase() === 'utf-8');
  return { type, subtype, params, q, paramsHold };
}

/**
 * The weight the caller gives one representation: that of the most specific media range matching it
 * (RFC 9110 §12.5.1: a type over `type/*` over `*\/*`, and a range with more parameters over one with
 * fewer), 0 when none does; `named` when that range names the media type itself (no wildcard). A
 * range's parameters must all hold for the representation: `charset` compared without case against
 * utf-8, any other parameter is one the gateway's answers do not carry.
 */
function weightOf(ranges: readonly MediaRange[], offered: (typeof OFFERED)[number]): { q: number; named: boolean } {
  let best: { specificity: number; q: number } | undefined;
  for (const range of ranges) {
    if (range.type !== '*' && range.type !== offered.type) continue;
    if (range.subtype !== '*' && range.subtype !== offered.subtype) continue;
    if (!range.paramsHold) continue;
    const specificity = (range.type === '*' ? 0 : range.subtype === '*' ? 1 : 2) * 100 + range.params.size;
    if (!best || specificity > best.specificity) best = { specificity, q: range.q };
  }
  return { q: best?.q ?? 0, named: (best?.specificity ?? 0) >= 200 };
}

/** Accept fields up to this length have their parsed ranges remembered ({@link acceptRanges}). */
const REMEMBERED_FIELD_CHARS = 256;
/** How many distinct Accept fields are remembered; past it the memo starts over (clients send a handful). */
const REMEMBERED_FIELDS = 64;
const rangesByField = new Map<string, readonly MediaRange[]>();

/**
 * The well-formed media ranges of an Accept field. Remembered per field text (at most
 * {@link REMEMBERED_FIELDS} fields of up to {@link REMEMBERED_FIELD_CHARS} characters): every MCP POST is
 * negotiated twice (the fast path's eligibility, the edge's 406) with the same few fields, and parsing one
 * measured about 1% of the gateway's CPU and 2.5 KB of garbage per tools/call. The ranges are never mutated.
 */
function acceptRanges(field: string): readonly MediaRange[] {
  const known = rangesByField.get(field);
  if (known) return known;
  const ranges = splitOutsideQuotes(field, ',')
    .filter((member) => member !== '')
    .map(parseRange)
    .filter((range): range is MediaRange => range !== undefined);
  if (field.length <= REMEMBERED_FIELD_CHARS) {
    if (rangesByField.size >= REMEMBERED_FIELDS) rangesByField.clear();
    rangesByField.set(field, ranges);
  }
  return ranges;
}

/**
 * The representation to answer a request in, given its `Accept` field (repeated fields joined by `, `)
 * and the one the server would choose on its own (`serverChoice`: what the SDK's leg or the fast path
 * produces): the acceptable one with the highest weight; on a tie `serverChoice`, except that an event
 * stream is sent only to a caller naming `text/event-stream` (a `*\/*` or `text/*` caller, such as curl
 * or a generic HTTP client, gets JSON, which it can read); undefined when neither is acceptable (q=0 or no matching range: the caller gets 406). No Accept at
 * all, or an empty one, is read as `*\/*` (RFC 9110 §12.5.1: "A request without any Accept header field implies
 * that the user agent will accept any media type"), so such a caller gets JSON too; malformed members are ignored, so an Accept
 * made only of them accepts nothing. `only`: the answer can be in `serverChoice` alone (a
 * `subscriptions/listen` stream is SSE whatever the caller prefers): it, if acceptable at all.
 */
export function chooseRepresentation(accept: string | readonly string[] | undefined, serverChoice: Representation, only = false): Representation | undefined {
  const field = Array.isArray(accept) ? accept.join(', ') : (accept as string | undefined);
  // No Accept (or an empty one) is `*/*` (RFC 9110 §12.5.1): JSON, as for any caller not naming the stream.
  const ranges = acceptRanges(field === undefined || field.trim() === '' ? '*/*' : field);
  const weight = (representation: Representation) => weightOf(ranges, OFFERED.find((o) => o.representation === representation)!);
  const chosen = weight(serverChoice);
  if (only) return chosen.q > 0 ? serverChoice : undefined;
  const other: Representation = serverChoice === 'json' ? 'sse' : 'json';
  const alternative = weight(other);
  if (chosen.q === 0 && alternative.q === 0) return undefined;
  if (alternative.q !== chosen.q) return alternative.q > chosen.q ? other : serverChoice;
  return serverChoice === 'sse' && !chosen.named ? 'json' : serverChoice;
}
