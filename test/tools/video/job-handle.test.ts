import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/gateway/errors.js';
import { UserError } from '../../../src/lib/user-error.js';
import { classifyBilledFailure } from '../../../src/tools/billing.js';
import { decodeJobHandle, encodeJobHandle } from '../../../src/tools/video/job-handle.js';
import { risingProgress } from '../../../src/tools/video/wait.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('job handles', () => {
  it('round-trip the request id and connection id, short and URL-safe', () => {
    const refs = [
      { requestId: 'vid_0123456789abcdef', connectionId: '2' },
      { requestId: 'abc123', connectionId: null },
      { requestId: 'req/with spaces?and=odd#chars', connectionId: 'acct-7f3a' },
      { requestId: 'x'.repeat(1024), connectionId: 'c'.repeat(255) },
    ];
    for (const ref of refs) {
      const handle = encodeJobHandle(ref);
      expect(handle).toMatch(/^vj_[A-Za-z0-9_-]+$/);
      expect(decodeJobHandle(handle)).toEqual(ref);
      expect(decodeJobHandle(`  ${handle}\n`)).toEqual(ref);
    }
    expect(encodeJobHandle(refs[0]!).length).toBeLessThan(45);
  });

  it('detects every single-character change and every truncation', () => {
    const handle = encodeJobHandle({ requestId: 'vid_0123456789abcdef', connectionId: '2' });
    for (let i = 3; i < handle.length; i++) {
      for (const c of ALPHABET) {
        if (c === handle[i]) continue;
        const changed = handle.slice(0, i) + c + handle.slice(i + 1);
        expect(() => decodeJobHandle(changed), changed).toThrow(UserError);
      }
      expect(() => decodeJobHandle(handle.slice(0, i)), handle.slice(0, i)).toThrow(UserError);
    }
  });

  it('refuses ids that cannot be polled, and says what a job_id looks like', () => {
    expect(() => encodeJobHandle({ requestId: '', connectionId: null })).toThrow();
    expect(() => encodeJobHandle({ requestId: 'a\nb', connectionId: null })).toThrow();
    expect(() => encodeJobHandle({ requestId: 'a', connectionId: 'has space' })).toThrow();
    expect(() => decodeJobHandle('https://example.com/v.mp4')).toThrow(/does not start with vj_/);
    expect(() => decodeJobHandle('vj_')).toThrow(/truncated or garbled/);
    expect(() => decodeJobHandle('vj_a+b/')).toThrow(/characters a job_id never has/);
  });
});

describe('submit failures and billing', () => {
  const http = (status: number, serviceMessage?: string) =>
    new ServiceError({
      kind: 'http',
      status,
      message: `HTTP ${status}`,
      serviceMessage,
      maybeDelivered: true,
    });
  it('only a clear refusal is known to be unbilled', () => {
    for (const status of [400, 401, 402, 403, 404, 422, 429])
      expect(classifyBilledFailure(http(status))).toBe('refused');
    // The gateway's own 503 (no account free) turned it away; one after a provider's failure did not.
    expect(classifyBilledFailure(http(503, 'all accounts unavailable'))).toBe('refused');
    expect(classifyBilledFailure(http(503, '[openai] openai returned 500: down'))).toBe('ambiguous');
    for (const status of [408, 409, 500, 502, 504])
      expect(classifyBilledFailure(http(status))).toBe('ambiguous');
    for (const kind of ['timeout', 'network', 'malformed'] as const)
      expect(classifyBilledFailure(new ServiceError({ kind, message: kind, maybeDelivered: true }))).toBe(
        'ambiguous',
      );
    expect(
      classifyBilledFailure(new ServiceError({ kind: 'network', message: 'refused', maybeDelivered: false })),
    ).toBe('not-sent');
  });
});

describe('progress values', () => {
  it('always rise, even when the service repeats or steps back', async () => {
    const sent: number[] = [];
    const report = risingProgress(async (u) => {
      sent.push(u.progress);
    });
    for (const value of [10, 10, 5, 40, 40, 100]) await report(value, 100, '');
    expect(sent).toEqual([10, 10.01, 10.02, 40, 40.01, 100]);
  });
});
