import { createHash } from 'node:crypto';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeJobHandle } from '../../src/tools/video/job-handle.js';
import { type Connected, connectInMemory, tempDir, textOf } from '../harness/harness.js';
import { startThirdPartyHost, type ThirdPartyHost } from '../harness/third-party-host.js';
import { type ReferenceService, startReferenceService, synthesizeAudio } from '../reference-service/index.js';

/** What the fuzz suite found, pinned as plain regression tests (each failed before its fix). */
let service: ReferenceService;
let host: ThirdPartyHost;
let conn: Connected;
let cwd: string;

beforeAll(async () => {
  service = await startReferenceService();
  host = await startThirdPartyHost();
  cwd = tempDir('gtm-findings-');
  writeFileSync(join(cwd, 'talk.mp3'), synthesizeAudio('talk', 'mp3'));
  symlinkSync('loop', join(cwd, 'loop'));
  conn = await connectInMemory({
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    // The third-party host is on loopback, which downloads refuse unless it is allowed.
    GATEWAY_ALLOW_PRIVATE_URLS: new URL(host.url).host,
    CWD: cwd,
  });
});
afterAll(async () => {
  await conn.close();
  await service.close();
  await host.close();
});

describe('job handles whose request id is a dot segment', () => {
  it('are refused instead of polling /v1/ (URL parsing resolves /v1/videos/..)', async () => {
    for (const requestId of ['..', '.']) {
      const jobId = `vj_${encodedBody(requestId).toString('base64url')}`;
      const result = await conn.client.callTool({
        name: 'video_status',
        arguments: { job_id: jobId, wait_seconds: 0 },
      });
      expect(result.isError, requestId).toBe(true);
      expect(textOf(result)).toMatch(/not a valid video job_id \(it holds an invalid id\)/);
    }
    expect(() => encodeJobHandle({ requestId: '..', connectionId: '1' })).toThrow(/cannot be encoded/);
    expect(service.requests.filter((r) => r.route === 'videos.poll')).toEqual([]);
  });

  it('still accepts ids that merely contain dots', async () => {
    const jobId = encodeJobHandle({ requestId: '...', connectionId: '1' });
    const result = await conn.client.callTool({
      name: 'video_status',
      arguments: { job_id: jobId, wait_seconds: 0 },
    });
    expect(textOf(result)).toMatch(/service does not know this job/);
    expect(service.requests.at(-1)?.path).toBe('/v1/videos/...');
  });
});

describe('paths that cannot be resolved say why', () => {
  it('names a symlink loop and an over-long path instead of "No such file"', async () => {
    const cases: [string, RegExp][] = [
      ['loop', /loop cannot be resolved: its symbolic links form a loop\. Give a path inside/],
      [
        `${'x'.repeat(300)}.mp3`,
        /The file path is too long \(304 characters, starting "x{60}"\)\. Give a path inside/,
      ],
      ['missing.mp3', /No such file: missing\.mp3\. Give a path inside/],
    ];
    for (const [file_path, message] of cases) {
      const result = await conn.client.callTool({ name: 'audio_transcribe', arguments: { file_path } });
      expect(result.isError, file_path).toBe(true);
      expect(textOf(result)).toMatch(message);
    }
    expect(service.counters.transcriptions).toBe(0);
  });
});

describe('a download that redirects somewhere unusable', () => {
  it('says so, instead of "the connection failed"', async () => {
    const cases: [string, RegExp][] = [
      ['file:///etc/passwd', /it answered 302 without a usable http\(s\) location\. Check that the URL/],
      ['', /it answered 302 without a usable http\(s\) location/],
    ];
    for (const [to, message] of cases) {
      const url = `${host.url}/redirect?to=${to}`;
      const result = await conn.client.callTool({ name: 'audio_transcribe', arguments: { url } });
      expect(result.isError, to).toBe(true);
      expect(textOf(result)).toMatch(new RegExp(`^Could not download ${url.replace(/[?./]/g, '\\$&')}: `));
      expect(textOf(result)).toMatch(message);
    }
  });
});

/** A version-1 handle body with a valid checksum, built by hand (the encoder refuses these ids). */
function encodedBody(requestId: string): Buffer {
  const body = Buffer.concat([Buffer.from([1, 1]), Buffer.from('1'), Buffer.from(requestId)]);
  return Buffer.concat([body, createHash('sha256').update(body).digest().subarray(0, 4)]);
}
