// The `usage` tool through the SDK client: billed calls recorded in the ledger (by this server,
// and by other processes sharing the folder) come back per kind and period, with the limits and
// what they leave, the estimated cost and the latest calls — the same facts in the text and in the
// structured content. Calls are recorded with the ledger's API, as the billed tools record them.

import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { BillableCall, CallEnd } from '../../../src/ledger/ledger.js';
import { localPrincipal } from '../../../src/tools/define.js';
import type { UsageData } from '../../../src/tools/usage/usage-data.js';
import {
  type Connected,
  connectInMemory,
  PROJECT_ROOT,
  structuredOf,
  tempDir,
  textOf,
} from '../../harness/harness.js';
import type { WorkerTask } from '../../ledger/worker.js';

const opened: Connected[] = [];
afterEach(async () => {
  for (const server of opened.splice(0)) await server.close();
});

async function server(env: Record<string, string>): Promise<Connected> {
  const connected = await connectInMemory(env);
  opened.push(connected);
  return connected;
}

async function usage(gw: Connected): Promise<{ result: CallToolResult; text: string; data: UsageData }> {
  const result = (await gw.client.callTool({ name: 'usage', arguments: {} })) as CallToolResult;
  return { result, text: textOf(result), data: structuredOf<UsageData>(result) };
}

/** Records a billed call the way a billed tool does: begun before sending, ended with its outcome. */
async function record(
  gw: Connected,
  call: Omit<BillableCall, 'tool' | 'by'> & { tool?: string; by?: BillableCall['by'] },
  end: CallEnd,
) {
  const ledger = gw.runtime.ledger();
  const by = localPrincipal(gw.runtime.config);
  const begun = await ledger.begin({ tool: `${call.kind}_tool`, by, ...call });
  if (begun.status !== 'go') throw new Error(`not begun: ${begun.status}`);
  await ledger.end(begun.id, end);
}

const video = (text: string): Omit<BillableCall, 'tool' | 'by'> & { tool: string } => ({
  kind: 'video',
  tool: 'video_generate',
  model: 'xai/grok-imagine-video',
  text,
  expected: 8,
});

/** A process that opens the ledger on `dir` and records `calls` accepted video submits. */
function otherProcess(task: WorkerTask): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(PROJECT_ROOT, 'test/ledger/worker.ts'), JSON.stringify(task)],
      { cwd: PROJECT_ROOT },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) child.stdin.end('go\n');
    });
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`worker exited ${code}: ${stderr}`)),
    );
  });
}

describe('the usage tool', () => {
  it('is listed by default as a free read-only tool that reaches nothing outside, and can be left out', async () => {
    const gw = await server({});
    const listed = (await gw.client.listTools()).tools.find((t) => t.name === 'usage');
    expect(listed?.annotations).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(listed?.description).toMatch(/Free\.$/);
    const only = await server({ GATEWAY_TOOLS: 'usage' });
    expect((await only.client.listTools()).tools.map((t) => t.name)).toEqual([
      'web_search',
      'web_fetch',
      'usage',
    ]);
    const without = await server({ GATEWAY_DISABLED_TOOLS: 'usage' });
    expect((await without.client.listTools()).tools.map((t) => t.name)).not.toContain('usage');
  });

  it('answers before any billed call without making the ledger folder', async () => {
    const dir = join(tempDir(), 'ledger');
    const gw = await server({ GATEWAY_LEDGER_DIR: dir, GATEWAY_LIMITS: 'video=2/day' });
    const { result, text, data } = await usage(gw);
    expect(result.isError).toBeFalsy();
    expect(text).toContain('No billed calls in the last 24 hours, nor in this session.');
    expect(text).toContain('- video=2/day: 0 used, 2 left');
    expect(data.periods.day?.calls).toEqual({
      video: 0,
      speech: 0,
      transcription: 0,
      chat: 0,
      search: 0,
      fetch: 0,
    });
    expect(data.limits).toEqual([
      { limit: 'video=2/day', scope: 'everyone', used: 0, left: 2, next_at: null },
    ]);
    expect(data.latest).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });

  it('counts the calls per kind in the last hour, day and session, and lists the latest first', async () => {
    const gw = await server({ GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-') });
    await record(gw, video('a lighthouse in a storm at dusk'), {
      outcome: 'accepted',
      jobId: 'vj_1',
      amount: 8,
    });
    await record(gw, video('a cat surfing a wave'), { outcome: 'accepted', jobId: 'vj_2', amount: 6 });
    await record(
      gw,
      { kind: 'chat', tool: 'ask_model', model: 'openai/gpt-4o-mini', text: 'what is a ledger' },
      { outcome: 'accepted', amount: 1200 },
    );
    await record(
      gw,
      {
        kind: 'speech',
        tool: 'audio_speech',
        model: 'openai/tts-1/alloy',
        text: 'hello there',
        expected: 11,
      },
      { outcome: 'unknown' },
    );
    await record(
      gw,
      { kind: 'search', tool: 'web_search', model: 'tavily', text: 'mcp budget guard' },
      { outcome: 'refused', reason: '402 payment required' },
    );

    const { text, data } = await usage(gw);
    for (const period of ['hour', 'day', 'session'] as const) {
      expect(data.periods[period], period).toEqual({
        calls: { video: 2, speech: 1, transcription: 0, chat: 1, search: 0, fetch: 0 },
        amounts: { video_seconds: 14, speech_chars: 11, chat_tokens: 1200 },
        cost: null,
        unpriced: 0,
        unknown: 1,
        not_billed: 1,
      });
    }
    expect(data.latest.map((c) => [c.tool, c.model, c.outcome, c.words])).toEqual([
      ['web_search', 'tavily', 'refused', 'mcp budget guard'],
      ['audio_speech', 'openai/tts-1/alloy', 'unknown', 'hello there'],
      ['ask_model', 'openai/gpt-4o-mini', 'accepted', 'what is a ledger'],
      ['video_generate', 'xai/grok-imagine-video', 'accepted', 'a cat surfing a wave'],
      ['video_generate', 'xai/grok-imagine-video', 'accepted', 'a lighthouse in a storm at dusk'],
    ]);
    // The text says the same.
    expect(text).toContain('| kind | last hour | last 24 h | this session |');
    expect(text).toContain('| video | 2 (14 s) | 2 (14 s) | 2 (14 s) |');
    expect(text).toContain('| chat | 1 (1,200 tokens) | 1 (1,200 tokens) | 1 (1,200 tokens) |');
    expect(text).toContain('| search | 0 | 0 | 0 |');
    expect(text).toContain('1 call has an unknown outcome: counted, as it may have been billed.');
    expect(text).toContain('1 refused or declined (nothing billed) in the last 24 hours.');
    expect(text).toContain('No cost estimate: GATEWAY_PRICES is not set.');
    expect(text).toContain('No limits: GATEWAY_LIMITS is not set');
    expect(text).toMatch(/- \d+ s ago: web_search, tavily, refused — "mcp budget guard"\n/);
    expect(text).toMatch(
      /- \d+ s ago: video_generate, xai\/grok-imagine-video, accepted — "a lighthouse in a storm at dusk"$/,
    );
  });

  it('shows what each limit leaves, and when the next call is possible once one is used up', async () => {
    const gw = await server({
      GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-'),
      GATEWAY_LIMITS: 'video=2/day,speech=1/session,chat=5/hour',
    });
    await record(gw, video('first'), { outcome: 'accepted', jobId: 'vj_1', amount: 8 });
    await record(gw, video('second'), { outcome: 'accepted', jobId: 'vj_2', amount: 8 });
    await record(
      gw,
      { kind: 'speech', tool: 'audio_speech', model: 'openai/tts-1', text: 'once' },
      { outcome: 'accepted', amount: 4 },
    );
    const { text, data } = await usage(gw);
    const [videoLimit, speechLimit, chatLimit] = data.limits;
    expect(videoLimit).toMatchObject({ limit: 'video=2/day', scope: 'everyone', used: 2, left: 0 });
    expect(speechLimit).toEqual({
      limit: 'speech=1/session',
      scope: 'everyone',
      used: 1,
      left: 0,
      next_at: null,
    });
    expect(chatLimit).toEqual({ limit: 'chat=5/hour', scope: 'everyone', used: 0, left: 5, next_at: null });
    // When the next video is possible is when the ledger lets it through: the refusal agrees.
    const third = await gw.runtime
      .ledger()
      .begin({ ...video('third'), tool: 'video_generate', by: { id: 'local:test' } });
    expect(third.status).toBe('limited');
    expect(third.status === 'limited' && third.refusal.nextAt).toBe(videoLimit?.next_at);
    const at = videoLimit?.next_at ?? '';
    expect(Date.parse(at) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    expect(text).toContain(
      `- video=2/day: 2 used, none left: the next call is possible at ${at.slice(0, 10)} ${at.slice(11, 16)} UTC (in `,
    );
    expect(text).toContain('- speech=1/session: 1 used, none left: no more until the server restarts');
    expect(text).toContain('- chat=5/hour: 0 used, 5 left');
  });

  it('estimates the cost with GATEWAY_PRICES, leaving out calls no price applies to', async () => {
    const gw = await server({
      GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-'),
      GATEWAY_PRICES: 'xai/*=0.05/second,chat:*=0.5/1m-tokens',
      GATEWAY_LIMITS: 'cost=1/day',
    });
    await record(gw, video('ten seconds'), { outcome: 'accepted', jobId: 'vj_1', amount: 10 });
    await record(
      gw,
      { kind: 'chat', tool: 'ask_model', model: 'openai/gpt-4o-mini', text: 'tokens' },
      { outcome: 'accepted', amount: 200_000 },
    );
    await record(
      gw,
      { kind: 'speech', tool: 'audio_speech', model: 'openai/tts-1', text: 'no price' },
      { outcome: 'accepted', amount: 8 },
    );
    const { text, data } = await usage(gw);
    expect(data.periods.day).toMatchObject({ cost: 0.6, unpriced: 1 });
    expect(data.periods.session).toMatchObject({ cost: 0.6, unpriced: 1 });
    expect(data.limits).toEqual([
      { limit: 'cost=1/day', scope: 'everyone', used: 0.6, left: 0.4, next_at: null },
    ]);
    expect(text).toContain('| cost (estimated) | 0.6 | 0.6 | 0.6 |');
    expect(text).toContain('The cost leaves out 1 call no price in GATEWAY_PRICES applies to.');
    expect(text).toContain('- cost=1/day: 0.6 used, 0.4 left');
  });

  it('says when a spent cost limit frees up, and that a limit of 0 allows no call', async () => {
    const gw = await server({
      GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-'),
      GATEWAY_PRICES: 'xai/*=0.05/second',
      GATEWAY_LIMITS: 'cost=0.5/day,speech=0/day',
    });
    await record(gw, video('ten seconds'), { outcome: 'accepted', jobId: 'vj_1', amount: 10 });
    const { text, data } = await usage(gw);
    const [cost, speech] = data.limits;
    expect(cost).toMatchObject({ limit: 'cost=0.5/day', scope: 'everyone', used: 0.5, left: 0 });
    expect(Date.parse(cost?.next_at ?? '') - Date.parse(data.latest[0]?.at ?? '')).toBe(86_400_000);
    expect(speech).toEqual({ limit: 'speech=0/day', scope: 'everyone', used: 0, left: 0, next_at: null });
    expect(text).toMatch(/- cost=0\.5\/day: 0\.5 used, none left: the next call is possible at .* UTC \(in /);
    expect(text).toContain('- speech=0/day: 0 used, none left: it allows no call');
  });

  it('counts the calls of other processes sharing the ledger in the hour and day, not in this session', async () => {
    const dir = tempDir('gtm-ledger-');
    const gw = await server({ GATEWAY_LEDGER_DIR: dir, GATEWAY_LIMITS: 'video=5/day' });
    await record(gw, video('this server'), { outcome: 'accepted', jobId: 'vj_here', amount: 8 });
    await Promise.all(
      ['a', 'b'].map((name) => {
        const person = localPrincipal(gw.runtime.config).id; // the same user's other servers
        return otherProcess({ dir, action: 'race', calls: 2, name, person, limits: 'video=5/day' });
      }),
    );
    const { text, data } = await usage(gw);
    expect(data.periods.day?.calls.video).toBe(5);
    expect(data.periods.hour?.calls.video).toBe(5);
    expect(data.periods.session?.calls.video).toBe(1);
    expect(data.limits).toEqual([
      expect.objectContaining({ limit: 'video=5/day', scope: 'everyone', used: 5, left: 0 }),
    ]);
    expect(data.latest.map((c) => c.words).sort()).toEqual(
      ['video a 0 0', 'video a 0 1', 'video b 0 0', 'video b 0 1', 'this server'].sort(),
    );
    expect(text).toContain('| video | 5 (8 s) | 5 (8 s) | 1 (8 s) |');
  });

  it('says in one sentence when the ledger cannot be opened', async () => {
    const file = join(tempDir(), 'not-a-folder');
    writeFileSync(file, 'x');
    const gw = await server({ GATEWAY_LEDGER_DIR: file });
    const { result, text } = await usage(gw);
    expect(result.isError).toBe(true);
    expect(text).toBe(
      `The ledger's folder ${file} is not a folder: set GATEWAY_LEDGER_DIR to a folder of this user's.`,
    );
  });
});
