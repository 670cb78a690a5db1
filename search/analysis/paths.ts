/**
 * File paths, extensions and URLs in a request: a clue about the kind of data a task handles, not the
 * name of a server (a task naming `/root/music/x.mp3` wants the filesystem's tools, not a music server's).
 */

/** File paths (`/root/music`, `~/x`, `./a/b.md`) and bare extensions (`.pptx`) of a query. */
const PATHS = /(?<=^|[\s'"([])(?:(?:~|\.{1,2})?\/[^\s'")\]]+|\.[A-Za-z][A-Za-z0-9]{1,5})(?=$|[\s'")\],;:!?]|\.(?:\s|$))/g;

/** The query without its paths (`topic`), and the paths (`paths`, space-joined; '' without any). */
export function splitPaths(query: string): { topic: string; paths: string } {
  const found = query.match(PATHS);
  if (!found) return { topic: query, paths: '' };
  return { topic: query.replace(PATHS, ' '), paths: found.join(' ') };
}
