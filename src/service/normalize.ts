/** Small readers that turn loosely-typed JSON into typed values without throwing. */
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
