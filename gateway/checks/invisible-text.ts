/**
 * Invisible text (Unicode default-ignorable code points: zero-width spaces and joiners, bidi overrides
 * such as U+202E, tag characters): what a reader never sees, so it is taken out of whatever a person or
 * a model is shown: tool definitions (catalog/description-lint.ts) and a client's self-declared name on
 * the consent page and the console (auth/oauth/interaction.ts).
 */
/**
 * Default-ignorable code points (Unicode: DerivedCoreProperties `Default_Ignorable_Code_Point`): rendered
 * as nothing, so text made of them is read by a model and seen by nobody.
 */
export const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;
export const IGNORABLE_ALL = /\p{Default_Ignorable_Code_Point}/gu;
const EMOJI = /[\p{Emoji}\p{Emoji_Modifier}]/u;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
/** Letters of scripts that use zero-width (non-)joiners in ordinary writing (Arabic, Indic, ...): not Latin. */
const JOINING_LETTER = /^(?!\p{Script=Latin})[\p{L}\p{M}]$/u;

/**
 * Whether the default-ignorable character at `index` of `chars` is part of ordinary text: one emoji
 * presentation selector (U+FE0E/U+FE0F) after an emoji, a zero-width joiner inside an emoji sequence, a
 * zero-width (non-)joiner between two letters of a script that uses them. Anything else is hidden text.
 */
function needed(chars: readonly string[], index: number): boolean {
  const c = chars[index]!;
  const before = chars[index - 1] ?? '';
  const after = chars[index + 1] ?? '';
  if (c === '\uFE0F' || c === '\uFE0E') return EMOJI.test(before) && !IGNORABLE.test(before);
  if (c === '\u200D' && (PICTOGRAPHIC.test(after) || after === '\u2640' || after === '\u2642') && (EMOJI.test(before) || before === '\uFE0F')) return true;
  if (c === '\u200C' || c === '\u200D') return JOINING_LETTER.test(before) && JOINING_LETTER.test(after);
  return false;
}

/** `text` without its hidden invisible characters ({@link needed} ones stay); the same string when there are none. */
export function stripInvisible(text: string): string {
  if (!IGNORABLE.test(text)) return text;
  const chars = [...text];
  let out = '';
  for (let i = 0; i < chars.length; i++) if (!IGNORABLE.test(chars[i]!) || needed(chars, i)) out += chars[i];
  return out;
}

/** Whether `text` holds an invisible character that {@link stripInvisible} removes. */
export function hasInvisible(text: string): boolean {
  return stripInvisible(text) !== text;
}

/**
 * `text` with every default-ignorable character written as `\u{XXXX}` (hex, upper case), the ones
 * {@link stripInvisible} keeps included: what a log line, a terminal or a page must show of text whose
 * invisible characters are the point (a lint finding's excerpt, a pin diff), where raw they render as
 * nothing and two different strings look the same. In JSON text (a pin diff) a literal backslash is `\\`,
 * so there an escape is never mistaken for text the definition held.
 */
export function escapeInvisible(text: string): string {
  return text.replace(IGNORABLE_ALL, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`);
}

/** A name someone chose for themselves as a page shows it: without invisible characters, trimmed ('' for none left). */
export function shownName(text: string): string {
  return stripInvisible(text).trim();
}
