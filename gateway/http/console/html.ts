/**
 * HTML built from template literals with every interpolated value escaped (OWASP XSS prevention rule 1:
 * `& < > " '`), except values that are already {@link Html}. The console's pages are made of nothing else.
 */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Markup that is safe as it is (built by {@link html}). */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.value;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

/** `html\`<td>${name}</td>\``: strings are escaped, Html and arrays of them are inserted; null, undefined and false vanish. */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < parts.length; i++) out += render(parts[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** A page head's icon that costs no request: without it a browser asks for /favicon.ico, a 404 in the log each page. The pages' CSP allows `img-src data:` for it. */
export const NO_ICON = html`<link rel="icon" href="data:,">`;
