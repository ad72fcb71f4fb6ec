import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Era, MODERN } from '../harness/eras.js';
import { textOf } from '../harness/harness.js';
import { scaled } from '../harness/time.js';
import { type ReferenceService, startReferenceService, synthesizeAudio } from '../reference-service/index.js';
import { ENVELOPE, enveloped, expectationFor, rawLine, withId } from './harness/json-rpc-lines.js';
import { RawSession } from './harness/raw-session.js';

/**
 * Protocol-level fuzzing of the built server over stdio: raw lines (garbage, JSON that is not
 * JSON-RPC, wrong types for every part of a message, unknown methods and tools, huge lines).
 * JSON-RPC answers are required where JSON-RPC requires them, stdout stays pure JSON-RPC, and
 * the server keeps answering. Bounded: a fixed number of batches (100 in `npm test`, 500 in
 * `npm run test:all`, FUZZ_RPC_BATCHES), each made however long it takes, under a hang bound.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 424242);
const BATCHES = Number(process.env.FUZZ_RPC_BATCHES ?? 100);
/** About 15 ms a batch on a quiet 2-core machine, given 60. */
const TIMEOUT_MS = scaled(20_000 + BATCHES * 60);
const MiB = 1024 * 1024;

let service: ReferenceService;
let session: RawSession;

beforeAll(async () => {
  service = await startReferenceService();
  session = await RawSession.start({ GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey });
});
afterAll(async () => {
  await session.close();
  await service.close();
});

/**
 * Batches of hostile lines, each followed by a probe whose answer comes after every answer to
 * the lines before it. In the 2026-07-28 era, requests carry the era's envelope (as a client of
 * the era sends them); the probe is tools/list, since the era has no ping.
 */
async function fuzzBatches(target: RawSession, era: Era): Promise<void> {
  let batch = 0;
  let lines = 0;
  const probeOf = (id: string) =>
    era === MODERN
      ? { jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: ENVELOPE } }
      : { jsonrpc: '2.0', id, method: 'ping' };
  await fc.assert(
    fc.asyncProperty(fc.array(rawLine, { minLength: 1, maxLength: 8 }), async (raw) => {
      batch++;
      const sent = raw.map((line, i) => {
        const withAnId = withId(line, `b${batch}-${i}`);
        return era === MODERN ? enveloped(withAnId) : withAnId;
      });
      const expected = sent.map((line) => expectationFor(line, era));
      const anonymousBefore = target.anonymousErrors().length;
      for (const line of sent) target.writeLine(line);
      lines += sent.length;
      const probe = `probe-${batch}`;
      target.send(probeOf(probe));
      const ids = expected.flatMap((e) => ('id' in e ? [e.id] : []));
      const answers = await target.answersTo([...ids, probe]);
      expect(answers.get(probe)?.result).toBeDefined();
      for (const e of expected) {
        if (e.kind === 'method-not-found') expect(answers.get(e.id)?.error?.code, String(e.id)).toBe(-32601);
        if (e.kind === 'answer') expect(answers.get(e.id), String(e.id)).toSatisfy(hasResultOrError);
      }
      const anonymous = target.anonymousErrors().slice(anonymousBefore);
      const wanted = expected.flatMap((e) =>
        e.kind === 'parse-error' ? [-32700] : e.kind === 'invalid-request' ? [-32600] : [],
      );
      expect(anonymous.map((a) => a.error?.code)).toEqual(wanted);
    }),
    { seed: SEED, numRuns: BATCHES },
  );
  console.log(`json-rpc fuzz (${era}): ${batch} batches, ${lines} lines (seed ${SEED})`);
  expect(batch).toBe(BATCHES);
  expectCleanStderr(target);
}

it(`answers ${BATCHES} batches of hostile lines as JSON-RPC requires, to a 2025-era client (seed ${SEED})`, {
  timeout: TIMEOUT_MS,
}, async () => {
  await fuzzBatches(session, '2025-era');
});

it(`answers ${BATCHES} batches of hostile lines as JSON-RPC requires, to a 2026-07-28 client (seed ${SEED})`, {
  timeout: TIMEOUT_MS,
}, async () => {
  const modern = await RawSession.start(
    { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey },
    MODERN,
  );
  try {
    await fuzzBatches(modern, MODERN);
  } finally {
    await modern.close();
  }
});

it('answers a line nested too deep to parse in bounded time with a parse error, and goes on', async () => {
  const anonymousBefore = session.anonymousErrors().length;
  const depth = 2_000_000;
  session.writeLine(`${'['.repeat(depth)}${']'.repeat(depth)}`);
  session.send({ jsonrpc: '2.0', id: 'after-deep', method: 'ping' });
  expect((await session.answerTo('after-deep')).result).toEqual({});
  const [refused] = session.anonymousErrors().slice(anonymousBefore);
  expect(refused?.error?.code).toBe(-32700);
  expect(refused?.error?.message).toMatch(/nests deeper than 256 levels/);
});

it('reads a 12 MiB tools/call line (over the SDK default buffer) and answers it', async () => {
  const audio = Buffer.concat([synthesizeAudio('long', 'mp3'), Buffer.alloc(9 * MiB, 7)]);
  const data = audio.toString('base64');
  expect(data.length).toBeGreaterThan(12 * MiB);
  session.send({
    jsonrpc: '2.0',
    id: 'big-call',
    method: 'tools/call',
    params: { name: 'audio_transcribe', arguments: { data_base64: data, max_length: 100 } },
  });
  const answer = await session.answerTo('big-call');
  const result = answer.result as { isError?: boolean; structuredContent?: { total_length: number } };
  expect(result.isError, textOf(result)).toBeFalsy();
  expect(result.structuredContent?.total_length).toBeGreaterThan(0);
  expect(service.requests.at(-1)?.body).toMatchObject({ file: { size: audio.length } });
});

it('skips a line over 64 MiB with an Invalid Request answer, and goes on reading', async () => {
  const before = session.anonymousErrors().length;
  const chunk = 'x'.repeat(MiB);
  for (let i = 0; i < 65; i++) session.server.child.stdin.write(chunk);
  session.writeLine('');
  session.send({ jsonrpc: '2.0', id: 'after-huge', method: 'ping' });
  expect((await session.answerTo('after-huge')).result).toEqual({});
  const [skipped] = session.anonymousErrors().slice(before);
  expect(skipped?.error).toEqual({
    code: -32600,
    message: `Invalid Request: the message is ${65 * MiB} bytes, over the 64 MiB limit; it was not read.`,
  });
  expect(session.server.stderr()).toMatch(/warn: skipped a \d+-byte line on stdin/);
});

it('reads CRLF-terminated lines and several messages in one write', async () => {
  session.writeLine(`${JSON.stringify({ jsonrpc: '2.0', id: 'crlf', method: 'ping' })}\r`);
  expect((await session.answerTo('crlf')).result).toEqual({});
  const two = ['pair-1', 'pair-2'].map((id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' }));
  session.server.child.stdin.write(`${two.join('\n')}\n`);
  for (const id of ['pair-1', 'pair-2']) expect((await session.answerTo(id)).result).toEqual({});
});

it('stays quiet on blank lines and exits 0 when stdin closes', async () => {
  const before = session.anonymousErrors().length;
  for (const blank of ['', ' ', '\t', '\r', ' \t'.repeat(10_000)]) session.writeLine(blank);
  session.send({ jsonrpc: '2.0', id: 'after-blank', method: 'ping' });
  await session.answerTo('after-blank');
  expect(session.anonymousErrors().length).toBe(before);
  expectCleanStderr();
  expect(await session.close()).toBe(0);
});

function hasResultOrError(answer: unknown): boolean {
  const a = answer as { result?: unknown; error?: unknown } | undefined;
  return a !== undefined && (a.result !== undefined || a.error !== undefined);
}

/** stderr is the log: only its own lines, and nothing at error level. */
function expectCleanStderr(target = session): void {
  const lines = target.server.stderr().split('\n').filter(Boolean);
  for (const line of lines) expect(line).toMatch(/^\[gateway-tools-mcp\] (warn|info|debug): /);
}
