/** Small formatting helpers for compact markdown. */
export function oneLine(text: string, max = 500): string {
  // Most titles and snippets are one line already: look before rebuilding the string.
  const flat = UNTIDY_SPACE.test(text) ? text.replace(/\s+/g, ' ').trim() : text;
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Whitespace that oneLine changes: any but a single space between words (\s less the space). */
const UNTIDY_SPACE = /[^\S ]| {2}|^ | $/;

export function formatCount(n: number): string {
  // Not toLocaleString: its first call loads ICU data, which costs start-up ~10 ms.
  return String(Math.trunc(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Replaces control characters (which the service rejects) with spaces. */
export function withoutControlChars(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}
