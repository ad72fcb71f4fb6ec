// Progress as the SDK's Client receives it from the built server (dist/cli.js; `npm run build`
// first), over stdio, Streamable HTTP and legacy SSE: the last notification of a call ("video
// done", sent just before the result) arrives, and a call's share of its total never goes back.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, structuredOf, textOf } from '../harness/harness.js';
import { connectHttp, disconnect, type HttpServerProcess, startHttpCli } from '../harness/http-harness.js';
import { unique, useRealGateway } from '../nine-router/use.js';

const gw = useRealGateway();

interface VideoOut {
  job_id: string;
  status: string;
  file_path: string | null;
}

/** Calls a tool with progress, collecting every notification the client handed on. */
async function withProgress(client: Client, name: string, args: Record<string, unknown>) {
  const seen: Progress[] = [];
  const result = await client.callTool({ name, arguments: args }, undefined, {
    onprogress: (p) => seen.push(p),
    timeout: 60_000,
  });
  return { result, seen };
}

/** A finished job: submitted, and done at its first poll. */
async function doneJob(client: Client): Promise<string> {
  const { result } = await withProgress(client, 'video_generate', {
    prompt: `${unique('progress')} polls-0`,
    wait_seconds: 20,
  });
  expect(result.isError, textOf(result)).toBeFalsy();
  expect(structuredOf<VideoOut>(result).status).toBe('done');
  return structuredOf<VideoOut>(result).job_id;
}

function expectRising(seen: Progress[]): void {
  for (let i = 1; i < seen.length; i++) {
    const [before, now] = [seen[i - 1]!, seen[i]!];
    expect(now.progress, JSON.stringify(seen)).toBeGreaterThan(before.progress);
    if (before.total && now.total) {
      expect(now.progress / now.total, JSON.stringify(seen)).toBeGreaterThanOrEqual(
        before.progress / before.total,
      );
    }
  }
}

async function checkLastNotification(client: Client): Promise<void> {
  const jobId = await doneJob(client);
  // The result follows "video done" at once: each call's last notification must still arrive.
  for (let call = 0; call < 6; call++) {
    const { result, seen } = await withProgress(client, 'video_status', { job_id: jobId, wait_seconds: 0 });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(seen.at(-1)?.message, `call ${call + 1}`).toBe('video done');
  }
  // With a download: the job's progress, then the file's, on one scale that never goes back.
  const { result, seen } = await withProgress(client, 'video_status', {
    job_id: jobId,
    wait_seconds: 0,
    download: true,
  });
  expect(structuredOf<VideoOut>(result).file_path).toMatch(/\.mp4$/);
  expect(seen.map((p) => p.message)).toEqual(['video done', expect.stringMatching(/^downloading video/)]);
  expect(seen.at(-1)).toMatchObject({ progress: 100, total: 100 });
  expectRising(seen);
}

describe('the last progress notification of a call arrives', () => {
  it('over stdio', async () => {
    const server = await connectStdio(gw.env);
    try {
      await checkLastNotification(server.client);
    } finally {
      await server.close();
    }
  });

  describe('over HTTP', () => {
    let http: HttpServerProcess;
    beforeAll(async () => {
      http = await startHttpCli(gw.env);
    });
    afterAll(async () => {
      await http?.stop();
    });

    for (const kind of ['sse', 'streamable'] as const) {
      it(`over ${kind === 'sse' ? 'legacy SSE' : 'Streamable HTTP'}`, async () => {
        const client = await connectHttp(http.url, kind);
        try {
          await checkLastNotification(client);
        } finally {
          await disconnect(client);
        }
      });
    }
  });
});
