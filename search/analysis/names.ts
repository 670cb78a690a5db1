/**
 * Names in a request: the title, person, band or company a request is about ("the lead actor of The Dark
 * Knight", "Taylor Swift's newest album", "the playlist 'My Top'"). They are values a tool is called with,
 * not words of what the tool does: "Broke" and "Girls" in "a poster of 2 Broke Girls" say nothing of which
 * tool finds posters. Found by their form: a quoted span, or a run of capitalised words (and numbers beside
 * them) after a sentence's first word; "I" and words in capitals alone (acronyms: VaR, FX, CSV, POST,
 * which are as often the subject's own terms) are not names.
 */

const QUOTED = /["“”]([^"“”]{1,80})["“”]|(?<=^|\s)['‘]([^'‘’]{1,80})['’](?=\s|$|[.,?!;:])/gu;
/** A capitalised word with a lower-case letter after its first: Nolan, McDonald's, Star-Lord. */
const TITLE_CASE = /^\p{Lu}[\p{L}\p{N}'’.&-]*\p{Ll}[\p{L}\p{N}'’.&-]*$/u;
const NUMBER = /^\p{N}+$/u;
const SENTENCE_END = /[.!?:;]["”’)]*$/;
const EDGE_PUNCTUATION = /^[("“‘[]+|[)"”’,:;.!?\]]+$/g;

/** The request without its names (`topic`) and the names (`names`, space-joined; '' without any). */
export function splitNames(query: string): { topic: string; names: string } {
  const names: string[] = [];
  const unquoted = query.replace(QUOTED, (_, a?: string, b?: string) => {
    names.push(a ?? b ?? '');
    return ' ';
  });
  const tokens = unquoted.split(/\s+/).filter((w) => w !== '');
  const isName = tokens.map((token, i) => {
    const word = token.replace(EDGE_PUNCTUATION, '');
    const first = i === 0 || SENTENCE_END.test(tokens[i - 1]);
    return !first && word !== 'I' && !/^I['’]/.test(word) && TITLE_CASE.test(word);
  });
  // A number beside a name is part of it ("2 Broke Girls", "Maroon 5").
  const inName = isName.map((name, i) => name || (NUMBER.test(tokens[i].replace(EDGE_PUNCTUATION, '')) && (isName[i - 1] === true || isName[i + 1] === true)));
  const topic: string[] = [];
  tokens.forEach((token, i) => (inName[i] ? names : topic).push(token));
  if (names.length === 0) return { topic: query, names: '' };
  return { topic: topic.join(' '), names: names.join(' ') };
}

/** True when the request names something (see the module docstring). */
export function namesSomething(query: string): boolean {
  return splitNames(query).names !== '';
}
