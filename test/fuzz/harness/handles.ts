import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { canEncode, encodeJobHandle } from '../../../src/tools/video/job-handle.js';
import { hostileString, mixedString } from './hostile.js';
import type { World } from './world.js';

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
