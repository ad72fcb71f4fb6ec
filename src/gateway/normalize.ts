// Small readers that turn loosely-typed JSON into typed values without throwing.

export type Json = Record<string, unknown>;

export function asObject(value: unknown): Json {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return Number(value);
  return undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** C0 and C1 control characters and DEL: terminal escapes among them. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** A gateway string as it may be shown to a person or a model: control characters removed. */
export function asPrintable(value: unknown): string | undefined {
  const text = asString(value);
  return text === undefined ? undefined : text.replace(CONTROL, '');
}

/** An id the gateway lists, or undefined when it carries control characters (none is sendable). */
export function asId(value: unknown): string | undefined {
  const text = asString(value);
  return text === undefined || new RegExp(CONTROL.source).test(text) ? undefined : text;
}

/**
 * Terminal escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL|ST`, two-character
 * `ESC x`), then the single characters no shown text needs: C0 controls but tab and newline (a
 * carriage return can overwrite a line), DEL, C1, and the bidirectional embeddings, overrides and
 * isolates that make text read otherwise than it is stored.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const ESCAPE_SEQUENCE = /\u001b(?:\[[0-?]*[ -/]*[@-~]?|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-_])?/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const UNSHOWN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const UNSHOWN_ALL = new RegExp(UNSHOWN.source, 'g');

/** Text the gateway sent, as it may be shown: escapes and controls removed, lines and tabs kept. */
export function shownText(text: string): string {
  // Almost no text has any: look before rebuilding the string.
  return UNSHOWN.test(text) ? text.replace(ESCAPE_SEQUENCE, '').replace(UNSHOWN_ALL, '') : text;
}

/** A parsed answer with shownText applied to every string in it; unchanged parts are not copied. */
export function shownValue<T>(value: T): T {
  if (typeof value === 'string') return shownText(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const shown = value.map(shownValue);
    return (shown.some((item, i) => item !== value[i]) ? shown : value) as T;
  }
  let out: Json | undefined;
  for (const key in value) {
    const item = (value as Json)[key];
    const shown = shownValue(item);
    if (shown === item) continue;
    if (!out) out = { ...(value as Json) };
    out[key] = shown;
  }
  return (out ?? value) as T;
}
