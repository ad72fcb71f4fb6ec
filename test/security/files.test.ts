import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type Connected,
  connectInMemory,
  connectStdio,
  structuredOf,
  tempDir,
  textOf,
} from '../harness/harness.js';
import { startThirdPartyHost, type ThirdPartyHost } from '../harness/third-party-host.js';
import { type ReferenceService, startReferenceService, synthesizeAudio } from '../reference-service/index.js';

// Hostile files: FIFOs and device files in the input roots, symlinks planted in the output
// directory, and the promise that the server writes nowhere but the output directory (and a
// private temporary directory it always removes).

let service: ReferenceService;
let host: ThirdPartyHost;

beforeAll(async () => {
  service = await startReferenceService();
  host = await startThirdPartyHost();
});
afterAll(async () => {
  await host.close();
  await service.close();
});
afterEach(() => {
  service.clearFaults();
  service.resetCounters();
});

const call = (conn: Connected, name: string, args: Record<string, unknown>) =>
  conn.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

describe.runIf(process.platform !== 'win32')('special files in the input roots', () => {
  it('refuses FIFOs and device files at once, without blocking and without sending anything', async () => {
    const cwd = tempDir('gtm-special-');
    execFileSync('mkfifo', [join(cwd, 'pipe.mp3')]);
    execFileSync('mkfifo', [join(cwd, 'pipe.png')]);
    symlinkSync('/dev/zero', join(cwd, 'zero.mp3'));
    // /dev is a root here on purpose: even inside a root, a device is not a file to upload.
    const conn = await connectInMemory({
      GATEWAY_BASE_URL: service.url,
      GATEWAY_API_KEY: service.apiKey,
      GATEWAY_INPUT_ROOTS: `${cwd},/dev`,
      CWD: cwd,
    });
    try {
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ['audio_transcribe', { file_path: 'pipe.mp3' }, /not a regular file/],
        ['audio_transcribe', { file_path: '/dev/zero' }, /not a regular file/],
        ['audio_transcribe', { file_path: '/dev/urandom' }, /not a regular file/],
        ['audio_transcribe', { file_path: 'zero.mp3' }, /not a regular file/],
        ['video_generate', { prompt: 'p', image_path: 'pipe.png' }, /not a regular file/],
        ['video_generate', { prompt: 'p', image_path: '/dev/zero' }, /not a regular file/],
      ];
      for (const [tool, args, message] of cases) {
        const result = await call(conn, tool, args);
        expect(result.isError, JSON.stringify(args)).toBe(true);
        expect(textOf(result), JSON.stringify(args)).toMatch(message);
      }
      expect(service.counters.transcriptions).toBe(0);
      expect(service.counters['videos.generations']).toBe(0);
    } finally {
      await conn.close();
    }
  });
});

describe.runIf(process.platform !== 'win32')('the output directory', () => {
  it('never follows a symlink planted under the name the next file would take', async () => {
    const base = tempDir('gtm-plant-');
    const outputDir = join(base, 'out');
    mkdirSync(outputDir);
    const victim = join(base, 'victim.txt');
    writeFileSync(victim, 'ORIGINAL');
    // Names are speech-<voice>-<UTC time to the second>.mp3: plant the next ten seconds' names.
    const now = Date.now();
    for (let s = 0; s < 10; s++) {
      const stamp = new Date(now + s * 1000)
        .toISOString()
        .replace(/[-:]/g, '')
        .replace(/\..*$/, '')
        .replace('T', '-');
      symlinkSync(victim, join(outputDir, `speech-alloy-${stamp}.mp3`));
    }
    const conn = await connectInMemory({
      GATEWAY_BASE_URL: service.url,
      GATEWAY_API_KEY: service.apiKey,
      GATEWAY_OUTPUT_DIR: outputDir,
    });
    try {
      const result = await call(conn, 'audio_speech', { text: 'hello', model: 'openai/tts-1/alloy' });
      expect(result.isError).toBeFalsy();
      const saved = structuredOf<{ file_path: string }>(result).file_path;
      expect(saved).toMatch(/speech-alloy-\d{8}-\d{6}-\d+\.mp3$/);
      expect(statSync(saved).isFile()).toBe(true);
      expect(readFileSync(saved).equals(synthesizeAudio('hello', 'mp3'))).toBe(true);
      expect(readFileSync(victim, 'utf8')).toBe('ORIGINAL');
    } finally {
      await conn.close();
    }
  });

  it('a symlink shipped in the working directory cannot lead saved files out of it', async () => {
    const base = tempDir('gtm-outlink-');
    const cwd = join(base, 'cloned-repo');
    const elsewhere = join(base, 'bashrc.d');
    mkdirSync(cwd);
    mkdirSync(elsewhere);
    symlinkSync('../bashrc.d', join(cwd, 'gateway-output'));
    const env = { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey, CWD: cwd };
    const conn = await connectInMemory(env);
    try {
      const result = await call(conn, 'audio_speech', { text: 'hello', model: 'openai/tts-1/alloy' });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /leads outside the working directory .* through a symlink, so nothing was saved/,
      );
      expect(readdirSync(elsewhere)).toEqual([]);
    } finally {
      await conn.close();
    }
    // The user's own choice of directory is followed wherever it leads.
    const chosen = await connectInMemory({
      ...env,
      GATEWAY_OUTPUT_DIR: join(cwd, 'gateway-output'),
      CWD: base,
    });
    try {
      const result = await call(chosen, 'audio_speech', { text: 'hello', model: 'openai/tts-1/alloy' });
      expect(result.isError).toBeFalsy();
      expect(readdirSync(elsewhere)).toHaveLength(1);
    } finally {
      await chosen.close();
    }
  });

  it('a whole session writes only into the output directory and leaves no temporary files', async () => {
    const cwd = tempDir('gtm-writes-');
    const tmp = tempDir('gtm-private-tmp-');
    writeFileSync(join(cwd, 'talk.mp3'), synthesizeAudio('local talk', 'mp3'));
    const before = new Set(listFiles(cwd));
    const spawned = await connectStdio({
      GATEWAY_BASE_URL: service.url,
      GATEWAY_API_KEY: service.apiKey,
      GATEWAY_ALLOW_PRIVATE_URLS: new URL(host.url).host,
      GATEWAY_MAX_UPLOAD_MB: '1',
      TMPDIR: tmp,
      CWD: cwd,
    });
    const run = (name: string, args: Record<string, unknown>) =>
      spawned.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
    try {
      expect((await run('audio_speech', { text: 'saved', model: 'openai/tts-1/alloy' })).isError).toBeFalsy();
      expect(
        (await run('audio_transcribe', { file_path: 'talk.mp3', response_format: 'srt' })).isError,
      ).toBeFalsy();
      expect((await run('audio_transcribe', { url: `${host.url}/audio/talk.mp3` })).isError).toBeFalsy();
      // Downloads that fail half-way (too big, no such file) must clean up after themselves too.
      expect((await run('audio_transcribe', { url: `${host.url}/endless.mp3` })).isError).toBe(true);
      expect((await run('audio_transcribe', { url: `${host.url}/missing.mp3` })).isError).toBe(true);
      const job = await run('video_generate', { prompt: 'p', wait_seconds: 0 });
      const jobId = structuredOf<{ job_id: string }>(job).job_id;
      expect((await run('video_status', { job_id: jobId, download: true })).isError).toBeFalsy();
    } finally {
      await spawned.close();
    }
    const created = listFiles(cwd).filter((f) => !before.has(f));
    expect(created).toHaveLength(3); // the speech, the .srt transcript and the video
    for (const file of created) expect(file.startsWith(`gateway-output/`), file).toBe(true);
    expect(listFiles(tmp)).toEqual([]);
  });
});

/** Every file under `dir`, relative to it. */
function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}
