// The standard outbound-proxy variables, read once at start-up. Node's own fetch and undici ignore
// them unless asked, so a server behind a corporate proxy could reach neither the gateway nor the
// hosts videos and audio are downloaded from. Lowercase names win over uppercase ones, as in curl
// and undici; HTTPS_PROXY falls back to HTTP_PROXY for https URLs.

export interface ProxySettings {
  /** Proxy for http:// URLs ('' = none). */
  httpProxy: string;
  /** Proxy for https:// URLs ('' = none). */
  httpsProxy: string;
  /** NO_PROXY as given: host names (a name also covers its subdomains), `host:port`, comma- or space-separated. */
  noProxy: string;
}

/** Thrown for a proxy variable that is not a proxy URL; the CLI reports it as a configuration error. */
export class ProxySettingError extends Error {
  override name = 'ProxySettingError';
}

type Env = Record<string, string | undefined>;

function pick(env: Env, name: string): { name: string; value: string } | undefined {
  for (const key of [name.toLowerCase(), name]) {
    const value = env[key]?.trim();
    if (value) return { name: key, value };
  }
  return undefined;
}

/** Undefined when no proxy applies to anything (none set, or NO_PROXY=*). */
export function readProxySettings(env: Env): ProxySettings | undefined {
  const http = pick(env, 'HTTP_PROXY');
  const https = pick(env, 'HTTPS_PROXY');
  const noProxy = pick(env, 'NO_PROXY')?.value ?? '';
  if (!http && !https) return undefined;
  if (noProxy === '*') return undefined;
  const httpProxy = http ? proxyUrl(http.name, http.value) : '';
  return { httpProxy, httpsProxy: https ? proxyUrl(https.name, https.value) : httpProxy, noProxy };
}

/** A proxy URL; `host:port` alone means http://host:port, as curl reads it. */
function proxyUrl(variable: string, value: string): string {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ProxySettingError(`invalid ${variable}: not a URL (expected http://<host>:<port>)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ProxySettingError(
      `invalid ${variable}: ${url.protocol} proxies are not supported (use http:// or https://)`,
    );
  }
  if (!url.hostname) throw new ProxySettingError(`invalid ${variable}: no host`);
  return url.href;
}

/** The proxy as it may be shown: without user name and password. */
export function shownProxy(url: string): string {
  const shown = new URL(url);
  shown.username = '';
  shown.password = '';
  return shown.origin;
}

/** The passwords in the proxy URLs, raw and decoded: secrets no log line or tool result may carry. */
export function proxyPasswords(settings: ProxySettings | undefined): string[] {
  if (!settings) return [];
  const out = new Set<string>();
  for (const url of [settings.httpProxy, settings.httpsProxy]) {
    if (!url) continue;
    const { password } = new URL(url);
    if (!password) continue;
    out.add(password);
    try {
      out.add(decodeURIComponent(password));
    } catch {
      // a malformed escape: the raw form is all there is
    }
  }
  return [...out];
}
