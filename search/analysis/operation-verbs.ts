/**
 * The operation verbs of tool catalogues: most tools are named for one of a few operations (create, update,
 * delete, get, list, search: CRUD and its reads, the verbs of REST's POST, PUT/PATCH, DELETE and GET), while
 * users ask for them in everyday verbs ("rename my algo" is an update, "remove the hook" a delete, "fetch my
 * profile" a get). Each everyday verb below also matches its operation's verb, wherever a catalogue holds it.
 * The classes are general English synonyms of each operation, kept to the verbs a request to a software
 * service uses; nothing here names a domain.
 */
import { normaliseTerm } from './terms.ts';

/** Operation -> everyday verbs asking for it. A verb may ask for more than one read ("show"). */
export const OPERATION_VERBS: Readonly<Record<string, readonly string[]>> = {
  create: ['add', 'new', 'make', 'register', 'build', 'generate', 'save', 'establish', 'define', 'insert', 'launch', 'deploy', 'upload', 'spin', 'subscribe'],
  update: ['change', 'edit', 'modify', 'alter', 'rename', 'adjust', 'amend', 'revise', 'tweak', 'patch', 'swap', 'switch', 'replace', 'reconfigure', 'set'],
  delete: ['remove', 'erase', 'drop', 'discard', 'destroy', 'purge', 'unregister', 'deregister', 'unsubscribe', 'wipe', 'stop', 'cancel', 'disable'],
  get: ['fetch', 'retrieve', 'read', 'show', 'view', 'see', 'display', 'lookup', 'obtain', 'pull'],
  list: ['show', 'enumerate', 'browse', 'view', 'display'],
  search: ['find', 'lookup', 'seek', 'query', 'locate'],
};

/**
 * For normalised terms (stemmed when `stem`), each everyday verb's operation verbs that `holds` says the
 * catalogue holds, normalised alike: the terms a query's verb also matches.
 */
export function operationSynonyms(holds: (term: string) => boolean, stem: boolean, fold: boolean): ReadonlyMap<string, readonly string[]> {
  const out = new Map<string, string[]>();
  for (const [operation, verbs] of Object.entries(OPERATION_VERBS)) {
    const head = normaliseTerm(operation, stem, fold);
    if (head === null || !holds(head)) continue;
    for (const verb of verbs) {
      const term = normaliseTerm(verb, stem, fold);
      if (term === null || term === head) continue;
      const heads: string[] = out.get(term) ?? [];
      if (!heads.includes(head)) heads.push(head);
      out.set(term, heads);
    }
  }
  return out;
}

/**
 * Operations that undo one another, by the verbs that name them (a request's first word, a tool name's
 * first part): a request to end something is no request for a tool that starts one ("cancel my open order"
 * ranked place_order first, "stop my strategy" execute_strategy: try-out), nor the reverse. General
 * English, no domain: a catalogue whose tools are named otherwise is not touched.
 */
export const UNDOING: Readonly<Record<'start' | 'end', readonly string[]>> = {
  start: [
    'create',
    'add',
    'new',
    'make',
    'place',
    'insert',
    'open',
    'start',
    'execute',
    'run',
    'launch',
    'submit',
    'enable',
    'subscribe',
    'register',
    'post',
    'book',
    'schedule',
    'activate',
    'resume',
  ],
  end: [
    'delete',
    'remove',
    'cancel',
    'stop',
    'close',
    'disable',
    'unsubscribe',
    'erase',
    'drop',
    'destroy',
    'purge',
    'wipe',
    'unregister',
    'deregister',
    'revoke',
    'terminate',
    'kill',
    'abort',
    'deactivate',
    'pause',
    'halt',
    'end',
  ],
};

/** Which side of {@link UNDOING} a word is on (it compared as typed, lower case), if either. */
export function undoingSide(word: string | undefined): 'start' | 'end' | undefined {
  if (word === undefined) return undefined;
  if (UNDOING.start.includes(word)) return 'start';
  if (UNDOING.end.includes(word)) return 'end';
  return undefined;
}
