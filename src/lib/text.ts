// Small formatting functions for compact markdown.

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

const MONTH_NAME = /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\b/i;
const YEAR = /\b(19|20)\d{2}\b/;

/**
 * A result's date for the text list: providers send `2026-01-15`, ISO timestamps, `Jan 15, 2026`,
 * `15 January 2026` or `2 days ago`. Calendar dates become `2026-01-15`; anything else is shown
 * whole (a relative age says more than a guess would).
 */
export function displayDate(raw: string): string {
  const text = oneLine(raw, 40);
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) return text.slice(0, 10);
  if (MONTH_NAME.test(text) && YEAR.test(text)) {
    const parsed = new Date(text.replace(/(\d)(st|nd|rd|th)\b/, '$1'));
    if (!Number.isNaN(parsed.getTime())) {
      const pad = (n: number) => String(n).padStart(2, '0');
      return `${parsed.getFullYear()}-${pad(parsed.getMonth() + 1)}-${pad(parsed.getDate())}`;
    }
  }
  return text;
}

/** A long text shown in a confirmation or a log line: its start and its length. */
export function excerpt(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}… (${text.length} characters)`;
}

/** An ISO time to the second: "2026-11-28T10:22:03Z". */
export function isoSeconds(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}
