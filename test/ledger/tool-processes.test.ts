// The ledger shared by built servers (dist/cli.js over stdio) one after another, against the
// reference service: a job submitted by one process is found again by the next after the first
// is gone, also when the submit's answer was lost to a reset or the process was killed while
// waiting for it; a damaged ledger database refuses billed calls, sending nothing, and says how to
// move it aside. The race of processes against a limit, on both gateways, is in
// billed-calls.real.test.ts.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useReferenceService } from '../harness/gateway.js';
import {
  connectStdio,
  processAlive,
  type Spawned,
  structuredOf,
  tempDir,
  textOf,
} from '../harness/harness.js';
import { listJobs } from '../harness/ledger.js';
import { submitsOf, until } from '../harness/video.js';

const reference = useReferenceService();

function start(dir: string): Promise<Spawned> {
  return connectStdio({ ...reference.env, GATEWAY_LEDGER_DIR: dir });
}

async function submit(server: Spawned, prompt: string) {
  const result = await server.client.callTool({
    name: 'video_generate',
    arguments: { prompt, wait_seconds: 0 },
  });
  return { result, text: textOf(result), jobId: structuredOf<{ job_id?: string }>(result)?.job_id };
}

/** Closes the client and waits for the server process to be gone. */
async function stop(server: Spawned): Promise<void> {
  const pid = server.pid();
  await server.close();
  if (pid !== null) await until(() => !processAlive(pid), 5_000, 'the server process to exit');
}

describe('jobs found again by the next process', () => {
  it('lists a job submitted by a process that has exited, and follows it', async () => {
    reference.service.reset();
    const dir = tempDir('gtm-ledger-');
    const first = await start(dir);
    const { jobId } = await submit(first, 'a kingfisher dives into a still pond at dawn');
    await stop(first);

    const next = await start(dir);
    try {
      const { jobs, text } = await listJobs(next.client);
      expect(jobs).toEqual([
        expect.objectContaining({
          job_id: jobId,
          status: expect.stringMatching(/^(running|done)$/),
          prompt: 'a kingfisher dives into a still pond at…',
          model: 'xai/grok-imagine-video',
          tool: 'video_generate',
        }),
      ]);
      expect(text).toContain(`\`${jobId}\``);
      const followed = await next.client.callTool({ name: 'video_status', arguments: { job_id: jobId } });
      expect(structuredOf<{ status: string }>(followed).status).toBe('done');
      expect(reference.service.counters['videos.generations']).toBe(1);
      // Node 22 announces node:sqlite as experimental on stderr: a user's terminal never sees it.
      expect(`${first.stderr()}${next.stderr()}`).not.toMatch(/ExperimentalWarning|experimental feature/);
      expect(next.stderr()).toMatch(/\S/); // the log is read: an empty one would prove nothing
    } finally {
      await stop(next);
    }
  });

  it('lists a submit cut by a connection reset after sending as unknown, with the key that retries it safely', async () => {
    reference.service.reset();
    const dir = tempDir('gtm-ledger-');
    const first = await start(dir);
    reference.service.inject('videos.generations', { reset: true });
    const lost = await submit(first, 'a paper crane unfolds itself');
    expect(lost.result.isError).toBe(true);
    await stop(first);
    const key = submitsOf(reference.service)[0]?.headers['idempotency-key'] as string;

    const next = await start(dir);
    try {
      const { jobs, text } = await listJobs(next.client);
      expect(jobs).toEqual([
        expect.objectContaining({ job_id: null, status: 'unknown', idempotency_key: key }),
      ]);
      expect(jobs[0]?.next).toContain(
        `call video_generate with the same arguments and idempotency_key "${key}"`,
      );
      expect(text).toMatch(/^1\. outcome unknown — "a paper crane unfolds itself" — /m);
      expect(text).toContain(`idempotency_key "${key}"`);
      // Retried with that key: sent once more, with the same key, and accepted.
      const retried = await next.client.callTool({
        name: 'video_generate',
        arguments: { prompt: 'a paper crane unfolds itself', wait_seconds: 0, idempotency_key: key },
      });
      expect(retried.isError, textOf(retried)).toBeFalsy();
      expect(submitsOf(reference.service).map((r) => r.headers['idempotency-key'])).toEqual([key, key]);
    } finally {
      await stop(next);
    }
  });

  it('lists a submit whose process was killed while the gateway held its answer as unknown', async () => {
    reference.service.reset();
    const dir = tempDir('gtm-ledger-');
    const first = await start(dir);
    reference.service.inject('videos.generations', { hang: true });
    const pending = submit(first, 'a lighthouse keeper lights the lamp').catch(() => undefined);
    await until(() => reference.service.counters['videos.generations'] === 1, 10_000, 'the submit to arrive');
    const pid = first.pid() as number;
    process.kill(pid, 'SIGKILL');
    await until(() => !processAlive(pid), 5_000, 'the killed process to be gone');
    await pending;
    await first.close().catch(() => undefined);
    const key = submitsOf(reference.service)[0]?.headers['idempotency-key'];

    const next = await start(dir);
    try {
      const { jobs } = await listJobs(next.client);
      expect(jobs).toEqual([
        expect.objectContaining({
          job_id: null,
          status: 'unknown',
          prompt: 'a lighthouse keeper lights the lamp',
          idempotency_key: key,
        }),
      ]);
    } finally {
      await stop(next);
    }
  });
});

describe('a damaged ledger', () => {
  it('refuses billed calls with one sentence that says how to move it aside, and sends nothing', async () => {
    reference.service.reset();
    const dir = tempDir('gtm-ledger-');
    const first = await start(dir);
    const { jobId } = await submit(first, 'a snail crosses a garden path');
    expect(jobId).toEqual(expect.any(String));
    await stop(first);
    // Garbage over the database (a disk error, a tool that wrote over it), its mode left as it was.
    const file = join(dir, 'ledger.sqlite');
    const garbage = Buffer.from('this is not a ledger, only garbage\n'.repeat(400));
    writeFileSync(file, garbage);

    const next = await start(dir);
    try {
      const sent = reference.service.requests.length;
      const refused = await submit(next, 'a heron waits in the reeds');
      expect(refused.result.isError).toBe(true);
      const sentence = new RegExp(
        `^Not sent, and nothing billed: the ledger of billed calls \\(${escaped(file)}\\) is damaged \\(file is not a database\\), so no billed call is sent: move it aside \\(mv ${escaped(file)} ${escaped(file)}\\.damaged\\) and the next call starts a new, empty ledger\\.$`,
      );
      expect(refused.text).toMatch(sentence);
      // One sentence: no other begins after a full stop.
      expect(refused.text.split(/[.!?]\s+(?=[A-Z])/)).toHaveLength(1);
      const search = await next.client.callTool({ name: 'web_search', arguments: { query: 'after damage' } });
      expect(search.isError).toBe(true);
      expect(textOf(search)).toMatch(sentence);
      // Nothing billed reached the gateway (web_search reads the free model catalog first).
      const billable = (route: string) => !route.startsWith('models') && route !== 'health';
      expect(reference.service.requests.slice(sent).filter((r) => billable(r.route))).toEqual([]);
      expect(reference.service.counters['videos.generations']).toBe(1);
      expect(reference.service.counters.search).toBe(0);
      // The damaged file is left as it was, and the server lives on.
      expect(readFileSync(file)).toEqual(garbage);
      expect(processAlive(next.pid() as number)).toBe(true);

      // Moved aside as the sentence says, the next call starts a new ledger and goes.
      const [, from, to] = /\(mv (\S+) (\S+)\)/.exec(refused.text) ?? [];
      expect([from, to]).toEqual([file, `${file}.damaged`]);
      renameSync(from as string, to as string);
      const after = await submit(next, 'a heron waits in the reeds');
      expect(after.result.isError, after.text).toBeFalsy();
      expect(reference.service.counters['videos.generations']).toBe(2);
      const { jobs } = await listJobs(next.client);
      expect(jobs.map((j) => j.job_id)).toEqual([after.jobId]);
      expect(readFileSync(`${file}.damaged`)).toEqual(garbage);
    } finally {
      await stop(next);
    }
  });
});

/** Text as a regular expression matches it literally. */
function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
