import { existsSync, readdirSync } from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useGateway } from '../harness/gateway.js';
import { type Connected, connectInMemory, tempDir, textOf } from '../harness/harness.js';
import { startThirdPartyHost, type ThirdPartyHost } from '../harness/third-party-host.js';
import { callVideo } from '../harness/video.js';
import { startReferenceService } from '../reference-service/index.js';

// The server fetches URLs itself only for audio_transcribe `url` inputs (an agent, so possibly a
// prompt injection, chooses them) and video downloads (the gateway chooses them). Neither may
// turn the server into a proxy into the local network. `internal` stands for a service there.

let internal: ThirdPartyHost;
let allowed: ThirdPartyHost;
let permissive: Connected;

const gw = useGateway({ env: () => ({ CWD: tempDir('gtm-ssrf-') }) });
beforeAll(async () => {
  internal = await startThirdPartyHost();
  allowed = await startThirdPartyHost();
  permissive = await connectInMemory({
    GATEWAY_BASE_URL: gw.service.url,
    GATEWAY_API_KEY: gw.service.apiKey,
    GATEWAY_ALLOW_PRIVATE_URLS: new URL(allowed.url).host,
    CWD: tempDir('gtm-ssrf-'),
  });
});
afterAll(async () => {
  await permissive.close();
  await internal.close();
  await allowed.close();
});
beforeEach(() => gw.service.setVideoTiming({ pollsUntilDone: 1 }));
afterEach(() => {
  internal.requests.length = 0;
  allowed.requests.length = 0;
});

function transcribe(url: string, target = gw.conn) {
  return target.client.callTool({
    name: 'audio_transcribe',
    arguments: { url, model: 'groq/whisper-large-v3' },
  }) as Promise<CallToolResult>;
}

const REFUSED = /Refused to connect to .*loopback, private or link-local.*GATEWAY_ALLOW_PRIVATE_URLS/s;

describe('audio URLs from tool arguments', () => {
  it('refuses loopback, private, link-local and metadata addresses, in every spelling, without connecting', async () => {
    const port = new URL(internal.url).port;
    const urls = [
      `${internal.url}/audio/talk.mp3`,
      `http://localhost:${port}/audio/talk.mp3`, // a name: refused on what it resolves to
      `http://127.1:${port}/audio/talk.mp3`,
      `http://2130706433:${port}/audio/talk.mp3`, // 127.0.0.1 as one number
      `http://[::1]:${port}/audio/talk.mp3`,
      `http://[::ffff:127.0.0.1]:${port}/audio/talk.mp3`,
      `http://0.0.0.0:${port}/audio/talk.mp3`,
      'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
      'http://10.0.0.1/internal.mp3',
      'http://192.168.1.1/router.mp3',
      'http://[fd00::1]/ula.mp3',
    ];
    for (const url of urls) {
      const result = await transcribe(url);
      expect(result.isError, url).toBe(true);
      expect(textOf(result), url).toMatch(REFUSED);
    }
    expect(internal.requests).toEqual([]);
    expect(gw.service.counters.transcriptions).toBe(0);
  });

  it('checks every redirect hop: an allowed host cannot bounce the server into the local network', async () => {
    const ok = await transcribe(`${allowed.url}/audio/talk.mp3`, permissive);
    expect(ok.isError).toBeFalsy();

    const port = new URL(internal.url).port;
    for (const to of [`${internal.url}/audio/talk.mp3`, `http://localhost:${port}/audio/talk.mp3`]) {
      const bounced = await transcribe(`${allowed.url}/redirect?to=${encodeURIComponent(to)}`, permissive);
      expect(bounced.isError, to).toBe(true);
      expect(textOf(bounced), to).toMatch(REFUSED);
    }
    expect(allowed.requests.map((r) => r.path)).toEqual(['/audio/talk.mp3', '/redirect', '/redirect']);
    expect(internal.requests).toEqual([]);
    expect(gw.service.counters.transcriptions).toBe(1);
  });

  it('GATEWAY_ALLOW_PRIVATE_URLS opens exactly the listed host and port', async () => {
    const other = `http://127.0.0.1:${new URL(internal.url).port}/audio/talk.mp3`;
    expect(textOf(await transcribe(other, permissive))).toMatch(REFUSED);
    expect(internal.requests).toEqual([]);
  });

  it('reaches the gateway itself, but never sends the key with a URL an agent typed', async () => {
    const result = await transcribe(`${gw.service.url}/files/video/clip.mp4?bytes=4000`);
    expect(result.isError).toBeFalsy();
    const fetched = gw.service.requests.find((r) => r.route === 'files.video');
    expect(fetched).toBeDefined();
    expect(fetched?.headers.authorization).toBeUndefined();
    expect(fetched?.headers['x-api-key']).toBeUndefined();
    expect(gw.service.counters.transcriptions).toBe(1);
  });
});

describe('video URLs from the gateway', () => {
  it('does not follow a finished video into the local network, and saves nothing', async () => {
    const cdnInternal = await startReferenceService({ apiKey: 'internal-never-reached' });
    try {
      gw.service.setVideoTiming({ pollsUntilDone: 1, videoBytes: 5000, redirectVideoTo: cdnInternal.url });
      const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
      const saved = await callVideo(gw.conn.client, 'video_status', { job_id: out.job_id, download: true });
      expect(saved.result.isError).toBe(true);
      expect(textOf(saved.result)).toMatch(/is done, but saving its video failed/);
      expect(textOf(saved.result)).toMatch(REFUSED);
      expect(gw.service.counters['files.redirect']).toBe(1); // the gateway's own hop is fine
      expect(cdnInternal.counters['files.video']).toBe(0);
      const outputDir = gw.conn.runtime.config.outputDir;
      expect(existsSync(outputDir) ? readdirSync(outputDir) : []).toEqual([]);
    } finally {
      await cdnInternal.close();
    }
  });

  it("downloads a video served from the gateway's own origin, on loopback", async () => {
    gw.service.setVideoTiming({ pollsUntilDone: 1, videoBytes: 5000 });
    // Another prompt than the case before: the same one would be answered with that job.
    const { out } = await callVideo(gw.conn.client, 'video_generate', { prompt: 'q', wait_seconds: 0 });
    const saved = await callVideo(gw.conn.client, 'video_status', { job_id: out.job_id, download: true });
    expect(saved.result.isError).toBeFalsy();
    expect(saved.out.file_path).toMatch(/\.mp4$/);
  });
});
