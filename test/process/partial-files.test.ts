import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { useReferenceService } from '../harness/gateway.js';
import { connectStdio, processAlive, tempDir } from '../harness/harness.js';
import { connectHttp, startHttpCli } from '../harness/http-harness.js';
import { callVideo, until } from '../harness/video.js';

// A saved file appears under its name only once it is complete. However the server ends while a
// video is still downloading (SIGTERM, the client closing stdin, an HTTP shutdown past its grace),
// the output directory is left without a truncated video and without a temporary file.

const reference = useReferenceService();
afterEach(() => reference.service.reset());

const outputOf = (cwd: string) => join(cwd, 'gateway-output');
const entries = (cwd: string) => (existsSync(outputOf(cwd)) ? readdirSync(outputOf(cwd)) : []);

/** Starts a download that stalls after its first bytes, and waits until it is being written. */
async function stalledDownload(client: Client, cwd: string): Promise<void> {
  reference.service.setVideoTiming({ pollsUntilDone: 1 });
  const { out } = await callVideo(client, 'video_generate', { prompt: 'p', wait_seconds: 0 });
  reference.service.inject('files.video', { slowBodyMs: 60_000 });
  client
    .callTool({ name: 'video_status', arguments: { job_id: out.job_id, download: true } })
    .catch(() => undefined);
  // Any file but the directory's writability probe: the video's, whatever it is named.
  await until(
    () => entries(cwd).some((name) => !name.startsWith('.gateway-tools-probe-')),
    10_000,
    'the download being written',
  );
}

describe('a server that ends mid-download leaves nothing behind', () => {
  it('on SIGTERM (stdio)', async () => {
    const cwd = tempDir('gtm-partial-');
    const spawned = await connectStdio({ ...reference.env, CWD: cwd });
    const pid = spawned.pid() as number;
    await stalledDownload(spawned.client, cwd);
    process.kill(pid, 'SIGTERM');
    await until(() => !processAlive(pid), 10_000, 'the server exiting');
    await spawned.close().catch(() => undefined);
    expect(entries(cwd)).toEqual([]);
  });

  it('when the client closes stdin', async () => {
    const cwd = tempDir('gtm-partial-');
    const spawned = await connectStdio({ ...reference.env, CWD: cwd });
    const pid = spawned.pid() as number;
    await stalledDownload(spawned.client, cwd);
    await spawned.close();
    await until(() => !processAlive(pid), 10_000, 'the server exiting');
    expect(entries(cwd)).toEqual([]);
  });

  it('on an HTTP shutdown past its grace', async () => {
    const cwd = tempDir('gtm-partial-');
    const server = await startHttpCli({ ...reference.env, CWD: cwd, GATEWAY_SHUTDOWN_GRACE_MS: '200' });
    const client = await connectHttp(server.url, 'streamable');
    await stalledDownload(client, cwd);
    expect(await server.stop()).toBe(0);
    await client.close().catch(() => undefined);
    expect(entries(cwd)).toEqual([]);
  });
});
