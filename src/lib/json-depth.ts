/**
 * How deep JSON may nest before it is parsed. The answers and messages this server reads nest a
 * dozen levels at most; a body of `[[[[…` under the size caps would otherwise cost JSON.parse
 * tens of seconds and gigabytes, and stall every other call meanwhile.
 */
export const MAX_JSON_DEPTH = 256;

const SCAN_FROM = 64 * 1024;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** True when `text`, read as JSON, opens more than `max` arrays and objects inside one another. */
export function nestsTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  // Below 64 KiB even the deepest nesting parses in milliseconds: most answers skip the scan.
  if (text.length <= SCAN_FROM) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
  }
  return false;
}
