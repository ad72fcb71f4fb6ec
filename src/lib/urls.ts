/** An absolute http:// or https:// URL with a host: the only URLs tools fetch or download. */
export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (u.protocol === 'http:' || u.protocol === 'https:') && Boolean(u.hostname);
  } catch {
    return false;
  }
}

/**
 * Text as it may be shown: the user name and password of every URL in it replaced by `***`
 * (a base URL or a proxy may carry them: `https://user:pass@host` → `https://***@host`). Works on
 * any text, a value that is not a URL included, so it can be applied before anything else is done
 * to it. Greedy up to the last `@` of the authority, as URL parsers read it.
 */
export function withoutCredentials(text: string): string {
  return text.replace(/\/\/[^/?#\s]*@/g, '//***@');
}
