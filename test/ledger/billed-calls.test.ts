// Every billed call in the ledger, through the front door (an SDK client, in memory, against the
// reference service): each tool begins its call before the request leaves and ends it with what
// became of it; a limit or a missing ledger sends nothing; a confirmation holds the call's place
// while the user decides; an identical submit still in flight or of unknown outcome is not sent
// again; video_status without a job_id lists the jobs. The cases both gateways produce (the race
// of processes, the duplicate guard) are in billed-calls.real.test.ts; processes that die or read
// a damaged ledger in tool-processes.test.ts.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useReferenceService } from '../harness/gateway.js';
import { type Connected, connectInMemory, structuredOf, tempDir, textOf } from '../harness/harness.js';
import { ledgerCalls, ledgerLines, listJobs } from '../harness/ledger.js';
import { pollsOf, submitsOf, until } from '../harness/video.js';
import { startReferenceService, synthesizeAudio } from '../reference-service/index.js';

const reference = useReferenceService();

const MODELS = {
  GATEWAY_SEARCH_MODEL: 'tavily',
  GATEWAY_FETCH_MODEL: 'jina-reader',
  GATEWAY_CHAT_MODEL: 'openai/gpt-4o-mini',
  GATEWAY_SUMMARY_MODEL: 'openai/gpt-4o-mini',
  GATEWAY_SPEECH_MODEL: 'openai/tts-1/alloy',
  GATEWAY_TRANSCRIBE_MODEL: 'groq/whisper-large-v3',
};
const AUDIO = synthesizeAudio('ledger', 'mp3').toString('base64');

/** A server of its own with a ledger of its own (or the one given), and the reference service reset. */
async function server(
  env: Record<string, string> = {},
  client?: Client,
): Promise<Connected & { dir: string }> {
  reference.service.reset();
  const dir = env.GATEWAY_LEDGER_DIR ?? tempDir('gtm-ledger-');
  const conn = await connectInMemory(
    { ...reference.env, ...MODELS, CWD: tempDir('gtm-billed-'), GATEWAY_LEDGER_DIR: dir, ...env },
    [],
    client,
  );
  return { ...conn, dir };
}

function call(conn: Connected, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return conn.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
}

async function ok(conn: Connected, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const result = await call(conn, name, args);
  expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
  return result;
}

describe('every billed call is in the ledger', () => {
  it('begins each call before it is sent and ends it with its outcome and amount; a cached page is no call', async () => {
    const conn = await server();
    try {
      await ok(conn, 'web_search', { query: 'ledger search' });
      await ok(conn, 'web_fetch', { url: 'https://example.com/long/1', max_length: 1000 });
      await ok(conn, 'web_fetch', { url: 'https://example.com/long/1', start_index: 1000, max_length: 1000 });
      await ok(conn, 'web_fetch', { url: 'https://example.com/asked/2', prompt: 'What does it say?' });
      await ok(conn, 'ask_model', { prompt: 'Say hello to the ledger.' });
      const video = await ok(conn, 'video_generate', {
        prompt: 'a heron lands on a pier',
        duration: 6,
        wait_seconds: 0,
      });
      const text = 'Twelve words are spoken here, so only the first eight are kept.';
      await ok(conn, 'audio_speech', { text });
      await ok(conn, 'audio_transcribe', { data_base64: AUDIO, response_format: 'verbose_json' });

      const calls = ledgerCalls(conn.dir);
      expect(calls.map((c) => `${c.begin.kind} ${c.begin.tool}`)).toEqual([
        'search web_search',
        'fetch web_fetch',
        'fetch web_fetch',
        'chat web_fetch',
        'chat ask_model',
        'video video_generate',
        'speech audio_speech',
        'transcription audio_transcribe',
      ]);
      expect(calls.every((c) => c.end?.outcome === 'accepted')).toBe(true);
      const byKind = new Map(calls.map((c) => [c.begin.kind, c]));
      expect(byKind.get('search')?.begin).toMatchObject({ model: 'tavily', words: 'ledger search' });
      expect(byKind.get('video')?.begin).toMatchObject({
        model: 'xai/grok-imagine-video',
        words: 'a heron lands on a pier',
        expected: 6,
        key: submitsOf(reference.service)[0]?.headers['idempotency-key'],
      });
      expect(byKind.get('video')?.end).toMatchObject({
        job: structuredOf<{ job_id: string }>(video).job_id,
        status: 'running',
      });
      const speech = byKind.get('speech');
      expect(speech?.begin).toMatchObject({
        expected: text.length,
        words: 'Twelve words are spoken here, so only the…',
      });
      expect(speech?.end).toMatchObject({
        amount: text.length,
        file: expect.stringMatching(/speech-alloy-.*\.mp3$/),
      });
      expect(byKind.get('transcription')?.end?.amount).toBeGreaterThan(0);
      // Nothing in the ledger is a text beyond its first words, or a key.
      const all = JSON.stringify(ledgerLines(conn.dir));
      expect(all).not.toContain(reference.service.apiKey);
      expect(all).not.toContain('first eight are kept');
    } finally {
      await conn.close();
    }
  });

  it('ends a call the gateway refused as refused, and one cut after sending as unknown', async () => {
    const conn = await server();
    try {
      reference.service.inject('speech', { status: 400, message: 'bad voice' });
      expect((await call(conn, 'audio_speech', { text: 'refused speech' })).isError).toBe(true);
      reference.service.inject('responses', { reset: true, times: 5 });
      expect((await call(conn, 'ask_model', { prompt: 'cut off' })).isError).toBe(true);
      expect(ledgerCalls(conn.dir).map((c) => [c.begin.kind, c.end?.outcome])).toEqual([
        ['speech', 'refused'],
        ['chat', 'unknown'],
      ]);
    } finally {
      await conn.close();
    }
  });
});

describe('nothing is sent that the ledger cannot hold', () => {
  it('refuses a call over GATEWAY_LIMITS with the limit, its use, when, how to raise it, and that nothing was sent', async () => {
    const conn = await server({ GATEWAY_LIMITS: 'search=1/day' });
    try {
      await ok(conn, 'web_search', { query: 'first' });
      const refused = await call(conn, 'web_search', { query: 'second' });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(
        /^Not sent, and nothing billed: the shared limit search=1\/day \(GATEWAY_LIMITS\) is reached, with 1 search call in the last 24 hours.*The next is possible at \d{4}-\d\d-\d\d \d\d:\d\d UTC.*raise it in GATEWAY_LIMITS/,
      );
      expect(reference.service.counters.search).toBe(1);
      expect(ledgerCalls(conn.dir).map((c) => c.end?.outcome)).toEqual(['accepted', 'declined']);
    } finally {
      await conn.close();
    }
  });

  it('sends nothing when the ledger cannot be made, and says where and what to do', async () => {
    const blocker = join(tempDir('gtm-noledger-'), 'a-file');
    writeFileSync(blocker, 'not a directory');
    const conn = await server({ GATEWAY_LEDGER_DIR: join(blocker, 'ledger') });
    try {
      for (const [name, args] of [
        ['web_search', { query: 'no ledger' }],
        ['video_generate', { prompt: 'no ledger', wait_seconds: 0 }],
        ['audio_speech', { text: 'no ledger' }],
      ] as const) {
        const result = await call(conn, name, args);
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(
          /^Not sent, and nothing billed: the ledger of billed calls at .*a-file\/ledger lies below a file, not a folder: set GATEWAY_LEDGER_DIR/,
        );
      }
      expect(reference.service.requests.filter((r) => !r.route.startsWith('models'))).toEqual([]);
      const listed = await listJobs(conn.client);
      expect(listed.result.isError).toBe(true);
      expect(listed.text).toMatch(
        /^The ledger of billed calls at .*a-file\/ledger lies below a file, not a folder: set GATEWAY_LEDGER_DIR/,
      );
    } finally {
      await conn.close();
    }
  });

  it('checks the limit before asking, holds no place while the user decides, and checks it again once approved', async () => {
    let answer!: (action: ElicitResult['action']) => void;
    let asked = 0;
    const user = new Client(
      { name: 'asking', version: '1' },
      { capabilities: { elicitation: { form: {} } } },
    );
    user.setRequestHandler(ElicitRequestSchema, () => {
      asked++;
      return new Promise<ElicitResult>((resolve) => {
        answer = (action) => resolve(action === 'accept' ? { action, content: {} } : { action });
      });
    });
    const env = { GATEWAY_LIMITS: 'speech=1/day', GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-') };
    const asking = await server({ ...env, GATEWAY_CONFIRM: 'speech' }, user);
    const other = await server(env);
    try {
      const deciding = call(asking, 'audio_speech', { text: 'shall I speak?' });
      await until(() => asked === 1, 5_000, 'the confirmation');
      // The person deciding holds no place: another call takes the day's one speech meanwhile.
      await ok(other, 'audio_speech', { text: 'me too' });
      answer('accept');
      const approved = await deciding;
      expect(approved.isError).toBe(true);
      expect(textOf(approved)).toMatch(/^Not sent, and nothing billed: the shared limit speech=1\/day/);
      // Over the limit now: refused without asking anyone.
      const refused = await call(asking, 'audio_speech', { text: 'and now?' });
      expect(textOf(refused)).toMatch(/^Not sent, and nothing billed: the shared limit speech=1\/day/);
      expect(asked).toBe(1);
      expect(reference.service.counters.speech).toBe(1);
      expect(ledgerCalls(asking.dir).map((c) => [c.begin.words, c.end?.outcome, c.end?.reason])).toEqual([
        ['me too', 'accepted', undefined],
        ['shall I speak?', 'declined', 'limit speech=1/day'],
        ['and now?', 'declined', 'limit speech=1/day'],
      ]);
    } finally {
      await other.close();
      await asking.close();
    }
  });
});

describe('an identical submit is never paid for twice', () => {
  const JOB = { prompt: 'a lantern drifting down a river', duration: 6, wait_seconds: 0 };

  it('refuses an identical submit while the first is still being sent, naming its key', async () => {
    const conn = await server();
    try {
      reference.service.inject('videos.generations', { delayMs: 1_500 });
      const first = call(conn, 'video_generate', JOB);
      await until(() => reference.service.counters['videos.generations'] === 1, 5_000, 'the first submit');
      const second = await call(conn, 'video_generate', JOB);
      expect(second.isError).toBe(true);
      const key = submitsOf(reference.service)[0]?.headers['idempotency-key'];
      expect(textOf(second)).toContain(
        `Not sent, and nothing billed: an identical video_generate is being submitted right now (idempotency key "${key}").`,
      );
      expect(textOf(second)).toMatch(/video_status without job_id.*allow_duplicate: true/s);
      expect((await first).isError).toBeFalsy();
      expect(reference.service.counters['videos.generations']).toBe(1);
    } finally {
      await conn.close();
    }
  });

  it('after an unknown outcome, sends an identical submit only with its idempotency key, then answers with that job', async () => {
    const conn = await server();
    try {
      reference.service.inject('videos.generations', { reset: true });
      const lost = await call(conn, 'video_generate', JOB);
      expect(textOf(lost)).toMatch(
        /Outcome unknown.*Do not resubmit blindly: call video_status without job_id to see whether the job exists.*idempotency_key "(gtm-[^"]+)"/s,
      );
      expect(textOf(lost)).not.toMatch(/dashboard|check the gateway/);
      const key = submitsOf(reference.service)[0]?.headers['idempotency-key'] as string;

      const blocked = await call(conn, 'video_generate', JOB);
      expect(blocked.isError).toBe(true);
      expect(textOf(blocked)).toMatch(
        new RegExp(
          `its outcome is unknown: it may have started a job.*video_generate with the same arguments and idempotency_key "${key}"`,
          's',
        ),
      );
      expect(reference.service.counters['videos.generations']).toBe(1);

      const retried = await ok(conn, 'video_generate', { ...JOB, idempotency_key: key });
      expect(submitsOf(reference.service)[1]?.headers['idempotency-key']).toBe(key);
      const again = await ok(conn, 'video_generate', JOB);
      expect(structuredOf<{ job_id: string }>(again).job_id).toBe(
        structuredOf<{ job_id: string }>(retried).job_id,
      );
      expect(textOf(again)).toMatch(
        /Nothing was sent or billed: an identical video_generate was accepted at/,
      );
      expect(reference.service.counters['videos.generations']).toBe(2);
    } finally {
      await conn.close();
    }
  });

  it('treats the same submit to another gateway as another purchase', async () => {
    const other = await startReferenceService();
    const here = await server();
    const there = await server({
      GATEWAY_BASE_URL: other.url,
      GATEWAY_API_KEY: other.apiKey,
      GATEWAY_LEDGER_DIR: here.dir,
    });
    try {
      const first = await ok(here, 'video_generate', JOB);
      const elsewhere = await ok(there, 'video_generate', JOB);
      expect(other.counters['videos.generations']).toBe(1);
      expect(textOf(elsewhere)).not.toMatch(/identical/);
      // The same gateway again: answered with its own earlier job, nothing sent.
      const again = await ok(here, 'video_generate', JOB);
      expect(structuredOf<{ job_id: string }>(again).job_id).toBe(
        structuredOf<{ job_id: string }>(first).job_id,
      );
      expect(reference.service.counters['videos.generations']).toBe(1);
    } finally {
      await here.close();
      await there.close();
      await other.close();
    }
  });

  it('makes the same speech again when the earlier file is gone', async () => {
    const conn = await server();
    try {
      const first = structuredOf<{ file_path: string }>(
        await ok(conn, 'audio_speech', { text: 'once more' }),
      );
      // Inline audio is not part of what is bought: the earlier file answers, attached.
      const reused = await ok(conn, 'audio_speech', { text: 'once more', return_audio: true });
      expect(structuredOf<{ file_path: string }>(reused).file_path).toBe(first.file_path);
      expect(textOf(reused)).toMatch(
        /The audio is also attached inline\. Nothing was sent or billed: the same speech .* allow_duplicate: true\.$/,
      );
      const audio = reused.content.find((c) => c.type === 'audio');
      expect(audio && Buffer.from(audio.data, 'base64').equals(readFileSync(first.file_path))).toBe(true);
      expect(reference.service.counters.speech).toBe(1);
      rmSync(first.file_path);
      const remade = structuredOf<{ file_path: string }>(
        await ok(conn, 'audio_speech', { text: 'once more' }),
      );
      expect(existsSync(remade.file_path)).toBe(true);
      expect(reference.service.counters.speech).toBe(2);
    } finally {
      await conn.close();
    }
  });

  it('does not make the same speech twice at once', async () => {
    const conn = await server();
    try {
      reference.service.inject('speech', { delayMs: 1_000 });
      const first = call(conn, 'audio_speech', { text: 'only one of us' });
      await until(() => reference.service.counters.speech === 1, 5_000, 'the first speech');
      const second = await call(conn, 'audio_speech', { text: 'only one of us' });
      expect(second.isError).toBe(true);
      expect(textOf(second)).toMatch(
        /^Not sent, and nothing billed: the same speech .* is being made right now .*allow_duplicate: true/,
      );
      expect((await first).isError).toBeFalsy();
      expect(reference.service.counters.speech).toBe(1);
    } finally {
      await conn.close();
    }
  });
});

describe('video_status without a job_id', () => {
  it('lists the recent jobs newest first, refreshing at most five running ones with free polls', async () => {
    const conn = await server();
    try {
      reference.service.setVideoTiming({ pollsUntilDone: 1_000 });
      const ids: string[] = [];
      for (let i = 1; i <= 7; i++) {
        const result = await ok(conn, 'video_generate', {
          prompt: `job number ${i} of seven`,
          wait_seconds: 0,
        });
        ids.push(structuredOf<{ job_id: string }>(result).job_id);
      }
      const { result, jobs, text } = await listJobs(conn.client);
      expect(result.isError, text).toBeFalsy();
      expect(jobs.map((j) => j.job_id)).toEqual([...ids].reverse());
      expect(jobs[0]).toMatchObject({
        status: 'running',
        prompt: 'job number 7 of seven',
        model: 'xai/grok-imagine-video',
        tool: 'video_generate',
        submitted_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      expect(jobs[0]?.progress).toBeTypeOf('number');
      expect(jobs[6]?.progress).toBeUndefined();
      const polled = ids.filter((id) => pollsOf(reference.service, id).length > 0);
      expect(polled).toEqual(ids.slice(2));
      expect(reference.service.requests.filter((r) => r.route === 'videos.poll')).toHaveLength(5);
      // The text carries the same jobs: clients differ in which form they hand their model.
      for (const id of ids) expect(text).toContain(`\`${id}\``);
      expect(text).toMatch(
        /^Your recent video jobs, newest first.*\n1\. `vj_[^`]+` — running \(\d+%\) — "job number 7 of seven" — xai\/grok-imagine-video — video_generate, \d{4}-\d\d-\d\d \d\d:\d\d UTC/s,
      );
      expect(structuredOf<{ next: string }>(result).next).toMatch(
        /Follow a job with video_status and its job_id/,
      );
      // Each poll's status is kept for the next listing, by any process.
      expect(ledgerLines(conn.dir).filter((l) => l.type === 'status')).toHaveLength(5);
    } finally {
      await conn.close();
    }
  });

  it('says so when there are no jobs', async () => {
    const conn = await server();
    try {
      const { result, jobs, text } = await listJobs(conn.client);
      expect(result.isError).toBeFalsy();
      expect(jobs).toEqual([]);
      expect(text).toMatch(/^No video jobs in the ledger of billed calls/);
    } finally {
      await conn.close();
    }
  });
});
