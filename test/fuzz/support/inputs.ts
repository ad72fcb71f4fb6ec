import { createHash } from 'node:crypto';
import { join } from 'node:path';
import fc from 'fast-check';
import { canEncode, encodeJobHandle } from '../../../src/tools/support/job-handle.js';
import { hostileString, hugeString, mixedString } from './hostile.js';
import type { World } from './world.js';

/** Local paths: legitimate ones, escapes of every kind, and paths built from dangerous parts. */
export function pathInput(w: World): fc.Arbitrary<string> {
  const inside = [
    'audio.mp3',
    './audio.mp3',
    'dir/../audio.mp3',
    'dir/nested.wav',
    'image.png',
    'link-in.mp3',
    'emoji 🎵.mp3',
    join(w.inRoot, 'audio.mp3'),
    join(w.inRoot2, 'other.mp3'),
    'notes.txt',
    'empty.mp3',
    'big.mp3',
    'big.png',
    'dir',
    'dir/',
    '.',
    'fifo.mp3',
  ];
  const escapes = [
    '../../outside/secret.mp3',
    '../in-evil/secret.mp3',
    join(w.outside, 'secret.mp3'),
    join(w.outside, 'secret.png'),
    join(w.outside, 'sub', 'deep.wav'),
    join(w.base, 'roots', 'in-evil', 'secret.mp3'),
    `${w.inRoot}/../../outside/secret.txt`,
    `${w.inRoot}/../in-evil/secret.mp3`,
    'link-out.mp3',
    'link-out-relative.png',
    'link-out-dir/secret.mp3',
    'link-out-dir/sub/deep.wav',
    'link-evil.mp3',
    'link-root/etc/passwd',
    'link-zero',
    'link-environ',
    'loop',
    'dangling.mp3',
    '/etc/passwd',
    '/etc/hostname',
    '/dev/zero',
    '/dev/urandom',
    '/dev/null',
    '/dev/stdin',
    '/dev/fd/0',
    '/proc/self/environ',
    '/proc/self/cmdline',
    '/proc/self/mem',
    '/proc/self/fd/0',
    '/proc/self/root/etc/passwd',
    '/',
    '~',
    '~/.ssh/id_rsa',
    '~root/.bashrc',
    '$HOME/.bashrc',
    '%2e%2e/%2e%2e/outside/secret.mp3',
    '..%2f..%2foutside%2fsecret.mp3',
    '..\\..\\outside\\secret.mp3',
    '....//....//outside/secret.mp3',
    `file://${w.outside}/secret.mp3`,
    'file:///etc/passwd',
    'audio.mp3\u0000../../outside/secret.mp3',
    '../../outside/secret.mp3\u0000.mp3',
    `${'../'.repeat(64)}etc/passwd`,
    `${'a/'.repeat(3000)}audio.mp3`,
    `${'x'.repeat(300)}.mp3`,
    join(w.inRoot, 'y'.repeat(5000)),
    ' audio.mp3',
    '\taudio.mp3\n',
    'AUDIO.MP3',
    'audio.mp3/',
    'audio.mp3/..',
    '//etc//passwd',
    '/./etc/../etc/passwd',
    'C:\\Windows\\win.ini',
    '\\\\server\\share\\x.mp3',
  ];
  const segment = fc.constantFrom(
    '..',
    '.',
    '',
    'dir',
    'outside',
    'secret.mp3',
    'link-out-dir',
    'audio.mp3',
    '%2e%2e',
    '~',
    '\u0000',
    '🎵',
    'link-in.mp3',
    'roots',
    'in-evil',
    'in',
  );
  const composed = fc
    .tuple(
      fc.constantFrom('', '/', `${w.inRoot}/`, `${w.base}/`, `${w.outside}/`),
      fc.array(segment, { maxLength: 8 }),
    )
    .map(([prefix, parts]) => prefix + parts.join('/'));
  return fc.oneof(
    { arbitrary: fc.constantFrom(...inside), weight: 3 },
    { arbitrary: fc.constantFrom(...escapes), weight: 4 },
    { arbitrary: composed, weight: 3 },
    { arbitrary: hostileString, weight: 1 },
  );
}

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

/** Job handles: real, forged with odd ids (valid checksum), tampered, crafted and random. */
export function jobHandle(w: World): fc.Arbitrary<string> {
  const real = fc.constantFrom(w.jobs.done, w.jobs.failed, w.jobs.running);
  const odd = fc.oneof(
    fc.constantFrom(
      '..',
      '.',
      '../models',
      '../../v1/models',
      '%2e%2e',
      'vid_unknown',
      '?x=1',
      '#f',
      'a/b',
      ' ',
    ),
    mixedString.filter((s) => s.length > 0),
    fc.constant('x'.repeat(1024)),
  );
  const connection = fc.option(
    fc.oneof(fc.constantFrom('1', '2', '3', '999'), fc.string({ unit: 'binary-ascii' })),
  );
  const forged = fc
    .record({ requestId: odd, connectionId: connection })
    .filter((ref) => canEncode(ref))
    .map((ref) => encodeJobHandle(ref));
  const tampered = fc
    .tuple(real, fc.nat(), fc.constantFrom('flip', 'drop', 'insert', 'cut', 'case', 'pad', 'space'))
    .map(([handle, n, how]) => tamper(handle, n, how));
  const crafted = fc
    .tuple(fc.nat({ max: 255 }), fc.nat({ max: 255 }), fc.uint8Array({ maxLength: 40 }))
    .map(([version, length, rest]) => withChecksum(Buffer.from([version, length, ...rest])));
  return fc.oneof(
    { arbitrary: real, weight: 3 },
    { arbitrary: forged, weight: 2 },
    { arbitrary: tampered, weight: 3 },
    { arbitrary: crafted, weight: 2 },
    { arbitrary: fc.base64String({ maxLength: 60 }).map((s) => `vj_${s}`), weight: 1 },
    { arbitrary: hostileString, weight: 1 },
  );
}

function tamper(handle: string, n: number, how: string): string {
  const at = 3 + (n % (handle.length - 3));
  const other = handle[at] === 'A' ? 'B' : 'A';
  switch (how) {
    case 'flip':
      return handle.slice(0, at) + other + handle.slice(at + 1);
    case 'drop':
      return handle.slice(0, at) + handle.slice(at + 1);
    case 'insert':
      return handle.slice(0, at) + other + handle.slice(at);
    case 'cut':
      return handle.slice(0, at);
    case 'case':
      return handle.slice(0, at) + handle.slice(at).toUpperCase();
    case 'pad':
      return `${handle}==`;
    default:
      return `${handle.slice(0, at)} ${handle.slice(at)}`;
  }
}

/** A handle whose checksum is right but whose body may be nonsense (bad version, lengths). */
function withChecksum(body: Buffer): string {
  const check = createHash('sha256').update(body).digest().subarray(0, 4);
  return `vj_${Buffer.concat([body, check]).toString('base64url')}`;
}
