// The ledger of billed calls on both gateways (describe.each): what reaches the provider behind
// the gateway is what counts — the reference service's requests, 9router's upstream journal.
// Three built servers sharing one ledger race six video submits against video=2/day; an identical
// submit, and the same speech, asked again within the duplicate window are not sent again.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BACKENDS, type Backend } from '../harness/backends.js';
import { connectStdio, type Spawned, structuredOf, tempDir, textOf } from '../harness/harness.js';
import { unique } from '../nine-router/use.js';

/** Requests of this test that reached the video or speech provider (submits, syntheses). */
async function reached(backend: Backend, what: 'submits' | 'speech'): Promise<number> {
  if (backend.reference) {
    const route = what === 'submits' ? 'videos.generations' : 'speech';
    return backend.reference.requests.filter((r) => r.route === route).length;
  }
  const journal = (await backend.nineRouter?.upstream()) ?? [];
  return journal.filter((e) =>
    what === 'submits'
      ? e.method === 'POST' && e.path.endsWith('/videos/generations')
      : e.path.endsWith('/audio/speech'),
  ).length;
}

describe.each(BACKENDS)('the ledger of billed calls on %s', (_name, use) => {
  const backend = use();
  const call = (name: string, args: Record<string, unknown>) =>
    backend.conn.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  it('lets exactly two of six video submits from three processes through video=2/day', async () => {
    const dir = tempDir('gtm-ledger-');
    const servers: Spawned[] = await Promise.all(
      [1, 2, 3].map(() =>
        connectStdio({ ...backend.env, GATEWAY_LEDGER_DIR: dir, GATEWAY_LIMITS: 'video=2/day' }),
      ),
    );
    try {
      const results = await Promise.all(
        servers.flatMap((server) =>
          [1, 2].map(
            () =>
              server.client.callTool({
                name: 'video_generate',
                arguments: { prompt: unique('race'), wait_seconds: 0 },
              }) as Promise<CallToolResult>,
          ),
        ),
      );
      const accepted = results.filter((r) => !r.isError);
      const refused = results.filter((r) => r.isError);
      expect(accepted).toHaveLength(2);
      expect(refused).toHaveLength(4);
      for (const result of refused)
        expect(textOf(result)).toMatch(
          /^Not sent, and nothing billed: the shared limit video=2\/day \(GATEWAY_LIMITS\)/,
        );
      expect(await reached(backend, 'submits')).toBe(2);
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  });

  it('sends an identical submit within the window once, and again with allow_duplicate', async () => {
    const job = { prompt: unique('twice asked'), duration: 6, wait_seconds: 0 };
    const first = await call('video_generate', job);
    const second = await call('video_generate', job);
    expect(second.isError, textOf(second)).toBeFalsy();
    expect(structuredOf<{ job_id: string }>(second).job_id).toBe(
      structuredOf<{ job_id: string }>(first).job_id,
    );
    expect(textOf(second)).toMatch(
      /Nothing was sent or billed: an identical video_generate was accepted at .*allow_duplicate: true/s,
    );
    expect(structuredOf<{ next: string }>(second).next).toMatch(/^Nothing was sent or billed/);
    expect(await reached(backend, 'submits')).toBe(1);

    const forced = await call('video_generate', { ...job, allow_duplicate: true });
    expect(forced.isError, textOf(forced)).toBeFalsy();
    expect(structuredOf<{ job_id: string }>(forced).job_id).not.toBe(
      structuredOf<{ job_id: string }>(first).job_id,
    );
    expect(await reached(backend, 'submits')).toBe(2);
  });

  it('makes the same speech once, answering the second call with its file', async () => {
    const speech = { text: unique('said once'), model: 'openai/tts-1/alloy' };
    const first = await call('audio_speech', speech);
    const second = await call('audio_speech', speech);
    expect(second.isError, textOf(second)).toBeFalsy();
    const path = structuredOf<{ file_path: string }>(first).file_path;
    expect(structuredOf<{ file_path: string }>(second)).toMatchObject({
      file_path: path,
      model: 'openai/tts-1/alloy',
    });
    expect(textOf(second)).toMatch(/Nothing was sent or billed: the same speech/);
    expect(await reached(backend, 'speech')).toBe(1);
  });

  it('finds a job another process submitted, from video_status without job_id, refreshed by a free poll', async () => {
    const dir = tempDir('gtm-ledger-');
    const env = { ...backend.env, GATEWAY_LEDGER_DIR: dir };
    const prompt = unique('found again');
    const submitter = await connectStdio(env);
    let jobId: string;
    try {
      const submitted = (await submitter.client.callTool({
        name: 'video_generate',
        arguments: { prompt, wait_seconds: 0 },
      })) as CallToolResult;
      expect(submitted.isError, textOf(submitted)).toBeFalsy();
      jobId = structuredOf<{ job_id: string }>(submitted).job_id;
    } finally {
      await submitter.close();
    }
    const polls = async () =>
      backend.reference
        ? backend.reference.requests.filter((r) => r.route === 'videos.poll').length
        : ((await backend.nineRouter?.upstream()) ?? []).filter(
            (e) => e.method === 'GET' && /\/videos\/[^/]+$/.test(e.path),
          ).length;
    const pollsBefore = await polls();
    const finder = await connectStdio(env);
    try {
      const listed = (await finder.client.callTool({
        name: 'video_status',
        arguments: {},
      })) as CallToolResult;
      expect(listed.isError, textOf(listed)).toBeFalsy();
      const { jobs, next } = structuredOf<{
        jobs: { job_id: string; prompt: string; status: string }[];
        next: string;
      }>(listed);
      expect(jobs[0]).toMatchObject({ job_id: jobId, prompt });
      expect(['running', 'done']).toContain(jobs[0]?.status);
      expect(textOf(listed)).toContain(jobId);
      expect(next).toMatch(/video_status and its job_id/);
    } finally {
      await finder.close();
    }
    expect(await polls()).toBeGreaterThan(pollsBefore);
    expect(await reached(backend, 'submits')).toBe(1);
  });
});
