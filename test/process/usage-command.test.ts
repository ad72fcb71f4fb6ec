// `gateway-tools-mcp usage` (the built CLI): the report for a person, a table or --json, read from
// the ledger the server processes write without making or changing it; an invalid GATEWAY_LIMITS
// stops it, and doctor, as it stops start-up.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLimits } from '../../src/config/limits.js';
import { Ledger } from '../../src/ledger/ledger.js';
import type { UsageData } from '../../src/tools/usage/usage-data.js';
import { runCli, tempDir } from '../harness/harness.js';

const quiet = { level: 'error' as const, error() {}, warn() {}, info() {}, debug() {} };

/** Records calls as a server process does, then closes its ledger. */
async function recordCalls(dir: string): Promise<void> {
  const ledger = Ledger.open({ dir, log: quiet });
  const calls = [
    {
      kind: 'video',
      tool: 'video_generate',
      model: 'xai/grok-imagine-video',
      text: 'a lighthouse at dusk',
      amount: 8,
    },
    {
      kind: 'video',
      tool: 'video_generate',
      model: 'xai/grok-imagine-video',
      text: 'a cat surfing',
      amount: 6,
    },
    { kind: 'chat', tool: 'ask_model', model: 'openai/gpt-4o-mini', text: 'what is a ledger', amount: 1000 },
  ] as const;
  for (const { amount, ...call } of calls) {
    const begun = await ledger.begin({ ...call, by: { id: 'local:test' } });
    if (begun.status !== 'go') throw new Error(begun.status);
    await ledger.end(begun.id, {
      outcome: 'accepted',
      amount,
      ...(call.kind === 'video' ? { jobId: 'vj' } : {}),
    });
  }
  await ledger.close();
}

const SETTINGS = {
  GATEWAY_LIMITS: 'video=2/day,chat=100/hour,speech=3/session',
  GATEWAY_PRICES: 'xai/*=0.05/second',
};

describe('gateway-tools-mcp usage', () => {
  it('says there is no ledger yet, exits 0 and makes no folder', async () => {
    const dir = join(tempDir(), 'ledger');
    const run = await runCli(['usage'], { GATEWAY_LEDGER_DIR: dir, GATEWAY_LIMITS: 'video=2/day' });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`^There is no ledger yet in ${dir}: no billed call has been recorded there.\n`),
    );
    expect(run.stdout).toContain('No billed calls in the last 24 hours.');
    expect(run.stdout).toContain('  video=2/day  0 used, 2 left');
    const json = await runCli(['usage', '--json'], { GATEWAY_LEDGER_DIR: dir });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ledger: dir,
      ledger_exists: false,
      limits: [],
      latest: [],
    });
    expect(existsSync(dir)).toBe(false);
  });

  it('shows the calls of the server processes as a table, and --json the same data, changing nothing', async () => {
    const dir = tempDir('gtm-ledger-');
    await recordCalls(dir);
    const database = join(dir, 'ledger.sqlite');
    const before = readFileSync(database);
    const run = await runCli(['usage'], { GATEWAY_LEDGER_DIR: dir, ...SETTINGS });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(`Billed calls of every server process of this user (ledger ${dir})`);
    // No session column: this process is no server.
    expect(lines).toContain('  kind              last hour         last 24 h');
    expect(lines).toContain('  video             2 (14 s)          2 (14 s)');
    expect(lines).toContain('  chat              1 (1,000 tokens)  1 (1,000 tokens)');
    expect(lines).toContain('  cost (estimated)  0.7               0.7');
    expect(run.stdout).toContain('The cost leaves out 1 call no price in GATEWAY_PRICES applies to.');
    expect(lines).toContain('Limits (GATEWAY_LIMITS):');
    expect(lines.find((l) => l.startsWith('  video=2/day'))).toMatch(
      /^ {2}video=2\/day {7}2 used, none left: the next call is possible at \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in (23 h 59 min|24 h 0 min)\)$/,
    );
    expect(lines).toContain('  chat=100/hour     1 used, 99 left');
    expect(lines).toContain('  speech=3/session  counted in each server process');
    expect(lines).toContain('Latest calls:');
    expect(lines.filter((l) => /^ {2}\d{4}-\d\d-\d\d \d\d:\d\d UTC {2}/.test(l))).toEqual([
      expect.stringMatching(/ask_model {7}openai\/gpt-4o-mini {6}accepted {2}what is a ledger$/),
      expect.stringMatching(/video_generate {2}xai\/grok-imagine-video {2}accepted {2}a cat surfing$/),
      expect.stringMatching(/video_generate {2}xai\/grok-imagine-video {2}accepted {2}a lighthouse at dusk$/),
    ]);

    const json = await runCli(['usage', '--json'], { GATEWAY_LEDGER_DIR: dir, ...SETTINGS });
    expect(json.code).toBe(0);
    const data = JSON.parse(json.stdout) as UsageData & { ledger_exists: boolean };
    expect(data.ledger_exists).toBe(true);
    expect(Object.keys(data.periods)).toEqual(['hour', 'day']);
    expect(data.periods.day).toEqual({
      calls: { video: 2, speech: 0, transcription: 0, chat: 1, search: 0, fetch: 0 },
      amounts: { video_seconds: 14, chat_tokens: 1000 },
      cost: 0.7,
      unpriced: 1,
      unknown: 0,
      not_billed: 0,
    });
    expect(data.limits).toEqual([
      { limit: 'video=2/day', scope: 'everyone', used: 2, left: 0, next_at: expect.stringMatching(/Z$/) },
      { limit: 'chat=100/hour', scope: 'everyone', used: 1, left: 99, next_at: null },
      { limit: 'speech=3/session', scope: 'everyone', used: null, left: null, next_at: null },
    ]);
    expect(data.latest.map((c) => [c.tool, c.outcome, c.words])).toEqual([
      ['ask_model', 'accepted', 'what is a ledger'],
      ['video_generate', 'accepted', 'a cat surfing'],
      ['video_generate', 'accepted', 'a lighthouse at dusk'],
    ]);
    // Read only: the database has the same bytes.
    expect(readFileSync(database).equals(before)).toBe(true);
  });

  it('says in one line that a damaged ledger is damaged and how to start a new one, and exits 1', async () => {
    const dir = tempDir('gtm-ledger-');
    const database = join(dir, 'ledger.sqlite');
    writeFileSync(database, 'this is not an SQLite database, but a file someone overwrote'.repeat(100));
    for (const args of [['usage'], ['ledger', 'export']]) {
      const run = await runCli(args, { GATEWAY_LEDGER_DIR: dir });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `gateway-tools-mcp: The ledger of billed calls (${database}) is damaged (file is not a database), so no billed call is sent: move it aside (mv ${database} ${database}.damaged) and the next call starts a new, empty ledger.\n`,
      );
    }
  });

  it('says in one line when the ledger cannot be read, and exits 1', async () => {
    const file = join(tempDir(), 'not-a-folder');
    writeFileSync(file, 'x');
    const run = await runCli(['usage'], { GATEWAY_LEDGER_DIR: file });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `gateway-tools-mcp: The ledger's folder ${file} is not a folder: set GATEWAY_LEDGER_DIR to a folder of this user's.\n`,
    );
  });

  it('is named by --help', async () => {
    const run = await runCli(['--help']);
    expect(run.stdout).toMatch(/^ {2}gateway-tools-mcp usage \[--json\] +billed calls per kind/m);
  });
});

describe('gateway-tools-mcp ledger export', () => {
  it('writes every call as one JSON line, oldest first, and --since keeps the later ones', async () => {
    const dir = tempDir('gtm-ledger-');
    await recordCalls(dir);
    const run = await runCli(['ledger', 'export'], { GATEWAY_LEDGER_DIR: dir, ...SETTINGS });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.trimEnd().split('\n');
    const calls = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(calls.map((c) => [c.tool, c.outcome, c.words, c.amount, c.cost])).toEqual([
      ['video_generate', 'accepted', 'a lighthouse at dusk', 8, 0.4],
      ['video_generate', 'accepted', 'a cat surfing', 6, expect.closeTo(0.3, 9)],
      ['ask_model', 'accepted', 'what is a ledger', 1000, null],
    ]);
    expect(Object.keys(calls[0] as object)).toEqual([
      'id',
      'at',
      'person',
      'client',
      'kind',
      'tool',
      'model',
      'words',
      'outcome',
      'job_id',
      'idempotency_key',
      'amount',
      'unit',
      'cost',
      'file',
      'reason',
      'ended_at',
      'pid',
    ]);
    const since = (calls[1] as { at: string }).at;
    const later = await runCli(['ledger', 'export', '--since', since], {
      GATEWAY_LEDGER_DIR: dir,
      ...SETTINGS,
    });
    expect(later.stdout).toBe(
      lines
        .filter((line) => (JSON.parse(line) as { at: string }).at >= since)
        .map((line) => `${line}\n`)
        .join(''),
    );
    expect(later.stdout).toContain('what is a ledger');
    const recent = await runCli(['ledger', 'export', '--since=1h'], { GATEWAY_LEDGER_DIR: dir });
    expect(recent.stdout.trimEnd().split('\n')).toHaveLength(3);
    const none = await runCli(['ledger', 'export', '--since', '2999-01-01'], { GATEWAY_LEDGER_DIR: dir });
    expect([none.code, none.stdout]).toEqual([0, '']);
  });

  it('exports nothing from a ledger not made yet, and makes none', async () => {
    const dir = join(tempDir(), 'ledger');
    const run = await runCli(['ledger', 'export'], { GATEWAY_LEDGER_DIR: dir });
    expect([run.code, run.stdout, run.stderr]).toEqual([0, '', '']);
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses a --since it cannot read, and a ledger command it does not know, with exit status 2', async () => {
    const bad = await runCli(['ledger', 'export', '--since', 'last tuesday']);
    expect([bad.code, bad.stdout]).toEqual([2, '']);
    expect(bad.stderr).toBe(
      'gateway-tools-mcp: invalid --since "last tuesday": give a date or time (2026-11-01, 2026-11-01T09:00Z) or a span (90m, 12h, 7d, 2w)\n',
    );
    const unknown = await runCli(['ledger', 'import']);
    expect([unknown.code, unknown.stderr]).toEqual([
      2,
      'gateway-tools-mcp: ledger takes one command: ledger export [--since TIME] [--user ID] [--format jsonl|csv]\n',
    ]);
  });
});

describe('an invalid GATEWAY_LIMITS', () => {
  it('stops start-up, doctor and usage alike: exit status 2 and one line naming it', async () => {
    const env = { GATEWAY_LIMITS: 'video=5/fortnight' };
    expect(parseLimits(env.GATEWAY_LIMITS).ok).toBe(false);
    const runs = await Promise.all([runCli([], env), runCli(['doctor'], env), runCli(['usage'], env)]);
    for (const run of runs) {
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        'gateway-tools-mcp: invalid GATEWAY_LIMITS (--limits): "video=5/fortnight": the period must be hour, day, week, month or session (got "video=5/fortnight")\n',
      );
    }
  });
});

describe('by person: usage --by-user and ledger export --user --format csv', () => {
  /** Two people's calls: Ana's two videos (one prompt a spreadsheet would run), Bob's question. */
  async function recordPeople(dir: string): Promise<void> {
    const ledger = Ledger.open({ dir, log: quiet, limitsPerUser: limits('video=3/day') });
    const calls = [
      {
        by: { id: 'ana', client: 'claude-code' },
        kind: 'video',
        text: 'a heron, at dawn "slowly"',
        amount: 8,
      },
      { by: { id: 'ana' }, kind: 'video', text: '=HYPERLINK("http://x")', amount: 6 },
      { by: { id: 'bob' }, kind: 'chat', text: 'what is a ledger', amount: 1000 },
    ] as const;
    for (const { amount, ...call } of calls) {
      const model = call.kind === 'video' ? 'xai/grok-imagine-video' : 'openai/gpt-4o-mini';
      const begun = await ledger.begin({ ...call, tool: `${call.kind}_tool`, model });
      if (begun.status !== 'go') throw new Error(begun.status);
      await ledger.end(begun.id, { outcome: 'accepted', amount });
    }
    await ledger.close();
  }
  const limits = (text: string) => {
    const parsed = parseLimits(text);
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  };

  it("lists each person's calls, cost and per-person limits, as a table and as --json", async () => {
    const dir = tempDir('gtm-ledger-');
    await recordPeople(dir);
    const env = {
      GATEWAY_LEDGER_DIR: dir,
      GATEWAY_LIMITS_PER_USER: 'video=3/day',
      GATEWAY_PRICES: 'xai/*=0.05/second',
    };
    const table = await runCli(['usage', '--by-user'], env);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n').slice(0, 5)).toEqual([
      `Billed calls by person (ledger ${dir})`,
      '',
      '  person  last 24 h  this month  cost 24 h  cost month  video=3/day',
      '  ana     2 video    2 video     0.7        0.7         2 used, 1 left',
      '  bob     1 chat     1 chat      0          0           0 used, 3 left',
    ]);
    const json = await runCli(['usage', '--by-user', '--json'], env);
    const { people } = JSON.parse(json.stdout) as {
      people: { person: string; limits: { used: number }[] }[];
    };
    expect(people.map((p) => [p.person, p.limits[0]?.used])).toEqual([
      ['ana', 2],
      ['bob', 0],
    ]);
    // The plain report leaves per-person limits to --by-user, and says so.
    expect((await runCli(['usage'], env)).stdout).toContain(
      'Limits per person (GATEWAY_LIMITS_PER_USER) are shown by gateway-tools-mcp usage --by-user.',
    );
  });

  it("exports one person's calls as CSV and as JSON Lines", async () => {
    const dir = tempDir('gtm-ledger-');
    await recordPeople(dir);
    const csv = await runCli(['ledger', 'export', '--user', 'ana', '--format', 'csv'], {
      GATEWAY_LEDGER_DIR: dir,
    });
    expect(csv.code, csv.stderr).toBe(0);
    const rows = csv.stdout.split('\r\n');
    expect(rows[0]).toBe(
      'id,at,person,client,kind,tool,model,words,outcome,job_id,idempotency_key,amount,unit,cost,file,reason,ended_at,pid',
    );
    expect(rows).toHaveLength(4); // the header, two calls, and the last line's end
    expect(rows[1]).toMatch(
      /^[\w-]+,\d{4}-[\d:T.-]+Z,ana,claude-code,video,video_tool,xai\/grok-imagine-video,"a heron, at dawn ""slowly""",accepted,,,8,seconds,,,,\d{4}-[\d:T.-]+Z,\d+$/,
    );
    // A cell a spreadsheet would run as a formula is shown as text.
    expect(rows[2]).toContain(`,ana,,video,video_tool,xai/grok-imagine-video,"'=HYPERLINK(""http://x"")",`);
    const jsonl = await runCli(['ledger', 'export', '--user=bob'], { GATEWAY_LEDGER_DIR: dir });
    const lines = jsonl.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((c) => [c.person, c.client, c.words])).toEqual([['bob', null, 'what is a ledger']]);
    const wrong = await runCli(['ledger', 'export', '--format', 'xlsx'], { GATEWAY_LEDGER_DIR: dir });
    expect([wrong.code, wrong.stderr]).toEqual([
      2,
      'gateway-tools-mcp: invalid --format "xlsx": jsonl or csv\n',
    ]);
  });
});
