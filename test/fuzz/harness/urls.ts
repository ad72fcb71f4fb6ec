import fc from 'fast-check';
import { hostileString, hugeString, mixedString } from './hostile.js';
import type { World } from './world.js';

/**
 * URL inputs of every scheme and host. Only audio_transcribe's `url` is fetched by the server
 * itself; those URLs are kept on loopback (this machine may send traffic nowhere else). Every
 * other URL is only forwarded to the reference gateway, which fetches nothing.
 */
const SCHEMES = ['http', 'https', 'HTTP', 'hTtPs', 'file', 'data', 'javascript', 'ftp', 'gopher', 'ws'];
const MORE_SCHEMES = ['wss', 'mailto', 'blob', 'about', 'jar', 'view-source', 'ssh', 'dict', 'ldap'];
/** Hosts that are only ever forwarded to the (reference) gateway, never contacted by the server. */
const FORWARDED_HOSTS = [
  'example.com',
  '127.0.0.1',
  '[::1]',
  'localhost',
  '169.254.169.254',
  '[fd00:ec2::254]',
  'metadata.google.internal',
  '0.0.0.0',
  '0',
  '2130706433',
  '0x7f.1',
  '10.0.0.1',
  '[::ffff:169.254.169.254]',
  'xn--nxasmq6b.com',
  'ünïcödé.example',
  '例え.テスト',
  'ex\u0000ample.com',
  'user:pass@example.com',
  'user:p%40ss@127.0.0.1:8080',
  `${'a'.repeat(250)}.com`,
  'evil.com#@good.com',
  'good.com@evil.com',
  '%31%32%37.0.0.1',
  'example.com:99999',
  '',
  'exa mple.com',
];
const URL_PATHS = ['/', '/a', '/untitled', '/../../etc/passwd', '/%2e%2e/%2e%2e/etc', '/?q=1#f', ''];
/** The reference gateway answers these with 60,000 and 240,000 characters: kept rare, they are slow. */
const LONG_PAGES = ['/long', '/huge'];
const ODD_URLS = [
  'javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  'data:image/png;base64,iVBORw0KGgo=',
  'data:image/png;base64,!!!',
  'file:///etc/passwd',
  'file:///proc/self/environ',
  'http://',
  'https://',
  '//example.com/x',
  'http:///etc/passwd',
  'http:\\\\example.com\\x',
  'http:example.com',
  'https:/example.com',
  'about:blank',
  `http://example.com/${'a'.repeat(5000)}`,
  ' https://example.com/page ',
  '\u202ehttps://example.com',
  'blob:https://example.com/uuid',
];

const urlPath = fc.oneof(
  { arbitrary: fc.constantFrom(...URL_PATHS), weight: 80 },
  { arbitrary: fc.constantFrom(...LONG_PAGES), weight: 3 },
  { arbitrary: mixedString.map((s) => `/${s}`), weight: 40 },
  { arbitrary: hugeString.map((s) => `/${s}`), weight: 1 },
);

/** URLs of every scheme and host, for inputs the server only forwards to the gateway. */
export const forwardedUrl: fc.Arbitrary<string> = fc.oneof(
  {
    arbitrary: fc
      .tuple(fc.constantFrom(...SCHEMES, ...MORE_SCHEMES), fc.constantFrom(...FORWARDED_HOSTS), urlPath)
      .map(([scheme, host, path]) => `${scheme}://${host}${path}`),
    weight: 5,
  },
  { arbitrary: fc.constantFrom(...ODD_URLS), weight: 2 },
  { arbitrary: hostileString, weight: 1 },
);

/** Well-formed http(s) URLs with unusual hosts and paths: valid input, forwarded to the gateway. */
export const httpUrl: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('https', 'http'),
    fc.constantFrom(
      'example.com',
      'docs.example.org',
      '169.254.169.254',
      'ünïcödé.example',
      'user:pw@example.com',
      '[::1]',
    ),
    urlPath,
  )
  .map(([scheme, host, path]) => `${scheme}://${host}${path}`);

/**
 * URLs for inputs the server downloads itself (audio_transcribe `url`): the same variety, but any
 * http(s) URL that would leave this machine is rewritten to a closed loopback port. A fuzz run
 * must never send traffic anywhere but 127.0.0.1 / ::1.
 */
export function fetchedUrl(w: World): fc.Arbitrary<string> {
  const vetted = [
    `${w.host.url}/audio/talk.mp3`,
    `${w.host.url}/audio/recording`,
    `${w.host.url}/huge.mp3`,
    `${w.host.url}/endless.mp3`,
    `${w.host.url}/nope`,
    `${w.host.url}/redirect?to=/audio/talk.mp3`,
    `${w.host.url}/redirect?to=http://127.0.0.1:1/x`,
    `${w.host.url}/redirect?to=file:///etc/passwd`,
    `${w.host.url}/redirect?to=${w.service.url}/files/video/x.mp4?bytes=64`,
    `${w.service.url}/files/video/vid_1.mp4?bytes=4000`,
    'http://127.0.0.1:1/audio.mp3',
    'http://localhost:1/audio.mp3',
    'http://[::1]:1/audio.mp3',
  ];
  return fc
    .oneof({ arbitrary: fc.constantFrom(...vetted), weight: 3 }, { arbitrary: forwardedUrl, weight: 4 })
    .map((url) => (vetted.includes(url) ? url : keptOnLoopback(url, w)));
}

function keptOnLoopback(value: string, w: World): string {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return value;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return value;
  const ours = [new URL(w.host.url).host, new URL(w.service.url).host];
  // Our own servers, but never the host's /redirect (its target is whatever the query says).
  if (ours.includes(url.host) && !url.pathname.includes('redirect')) return value;
  return `http://127.0.0.1:1${url.pathname.slice(0, 200)}`;
}
