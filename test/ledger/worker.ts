// A server process's use of the ledger, stripped to the calls: the tests start several of these at
// once (`node --import tsx test/ledger/worker.ts '<json>'`) to race them on one ledger, either a
// SQLite file in a folder they share or a PostgreSQL database (each with a folder of its own).
//
// It opens its ledger, says `ready` on stdout, and then does its action once for every `go` line on
// stdin, printing one line of JSON with what happened each time; it exits when stdin closes. A
// `hang` or `hold` worker lives on until the test kills it (or, for `hold`, sends `release`).
// Warnings go to stderr.

import { createInterface } from 'node:readline';
import { parseLimits } from '../../src/config/limits.js';
import type { Database } from '../../src/ledger/database.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { insertCall, tallies } from '../../src/ledger/sql.js';

export interface WorkerTask {
  /** GATEWAY_LEDGER_DIR: shared by the SQLite workers, one of its own for each PostgreSQL one. */
  dir: string;
  /** GATEWAY_LEDGER_URL: the PostgreSQL ledger they share, when set. */
  url?: string;
  limits?: string;
  /** How long a begin waits for another process's transaction (the ledger's default when absent). */
  waitMs?: number;
  /**
   * race: `calls` video submits at once, each ended accepted.
   * hang: one submit begun and never ended (the test kills the process).
   * stream: `calls` chat calls one after another, the id of each printed (`begun <id>`) once its
   *   begin is recorded, then ended; the test kills the process part-way.
   * many: `calls` submits one after another, with the longest fields a record can have.
   * hold: the store opened directly, and a begin's transaction opened and held (`holding` is
   *   printed) until `release` arrives on stdin; the test stops or kills the process meanwhile.
   * call: one chat call, timed, with a timer counting the event loop's turns while it waits.
   */
  action: 'race' | 'hang' | 'stream' | 'many' | 'hold' | 'call';
  calls?: number;
  name?: string;
  /** Who calls (the server's person when the test says one), else `local:<name>`. */
  person?: string;
}

/** What a `call` action reports. */
export interface CallReport {
  status: string | null;
  error: { name: string; message: string } | null;
  /** How long the begin took. */
  ms: number;
  /** Turns of a 10 ms interval timer while the begin was under way. */
  ticks: number;
}

const task = JSON.parse(process.argv[2] ?? '{}') as WorkerTask;
const limits = parseLimits(task.limits ?? '');
if (!limits.ok) throw new Error(limits.error);
const warn = (message: string) => process.stderr.write(`warn: ${message}\n`);
const log = { level: 'debug' as const, error: warn, warn, info: () => {}, debug: () => {} };
const name = task.name ?? String(process.pid);

const lines = createInterface({ input: process.stdin });
const queue: string[] = [];
let wake: (() => void) | undefined;
let closed = false;
lines.on('line', (line) => {
  queue.push(line);
  wake?.();
});
lines.on('close', () => {
  closed = true;
  wake?.();
});

/** The next line on stdin, or null once it is closed. */
async function nextLine(): Promise<string | null> {
  while (queue.length === 0 && !closed) await new Promise<void>((resolve) => (wake = resolve));
  return queue.shift() ?? null;
}

const say = (line: string) => process.stdout.write(`${line}\n`);

if (task.action === 'hold') {
  const store = await openStore();
  say('ready');
  if ((await nextLine()) === 'go') {
    await store.transaction(async (tx) => {
      // The transaction's first read, and a begin written: the writer's lock is really held.
      await tallies(tx, [{}]);
      await insertCall(tx, {
        id: `hold-${name}`,
        session: `hold-${name}`,
        pid: process.pid,
        host: 'holder',
        person: `local:${name}`,
        client: null,
        kind: 'chat',
        tool: 'ask_model',
        model: 'openai/gpt-4o-mini',
        hash: `hold-${name}`,
        words: 'held',
        key: null,
        expected: null,
      });
      say('holding');
      while ((await nextLine()) !== 'release') if (closed) break;
    });
    say(JSON.stringify({ released: true }));
  }
  await store.close();
  process.exit(0);
}

const ledger = Ledger.open({
  dir: task.dir,
  ...(task.url ? { url: task.url } : {}),
  limits: limits.value,
  log,
  ...(task.waitMs !== undefined ? { waitMs: task.waitMs } : {}),
});
// Opened now, so that what the test times or races is the calls, not the opening.
await ledger.usage(0);
say('ready');

let round = 0;
for (let line = await nextLine(); line !== null; line = await nextLine()) {
  if (line !== 'go') continue;
  say(JSON.stringify(await act(round++)));
}
await ledger.close();
process.exit(0);

async function act(round: number): Promise<unknown> {
  switch (task.action) {
    case 'race': {
      const results = await Promise.all(
        Array.from({ length: task.calls ?? 2 }, async (_, i) => {
          const result = await ledger.begin({
            by: { id: task.person ?? `local:${name}` },
            kind: 'video',
            tool: 'video_generate',
            model: 'xai/grok-imagine-video',
            text: `video ${name} ${round} ${i}`,
            idempotencyKey: `key-${name}-${round}-${i}`,
          });
          if (result.status === 'go')
            await ledger.end(result.id, { outcome: 'accepted', jobId: `vj_${name}_${round}_${i}` });
          return result;
        }),
      );
      return {
        outcomes: results.map((r) => r.status),
        sentences: results.flatMap((r) => (r.status === 'limited' ? [r.sentence] : [])),
      };
    }
    case 'hang': {
      const result = await ledger.begin({
        by: { id: task.person ?? `local:${name}` },
        kind: 'video',
        tool: 'video_generate',
        model: 'xai/grok-imagine-video',
        text: 'a lighthouse in a storm, slow zoom out, at dusk',
        idempotencyKey: `key-${name}`,
      });
      // The request "in flight" until the test kills this process.
      setInterval(() => {}, 60_000);
      return { status: result.status, id: result.status === 'go' ? result.id : null };
    }
    case 'stream': {
      for (let i = 0; i < (task.calls ?? 100); i++) {
        const result = await ledger.begin({
          by: { id: task.person ?? `local:${name}` },
          kind: 'chat',
          tool: 'ask_model',
          model: 'openai/gpt-4o-mini',
          text: `question ${name} ${i}`,
        });
        if (result.status !== 'go') throw new Error(`unexpected ${result.status}`);
        say(`begun ${result.id}`);
        await ledger.end(result.id, { outcome: 'accepted', amount: 10 });
      }
      return { calls: task.calls ?? 100 };
    }
    case 'many': {
      for (let i = 0; i < (task.calls ?? 100); i++) {
        const result = await ledger.begin({
          by: { id: task.person ?? `local:${name}` },
          kind: 'speech',
          tool: 'audio_speech',
          model: `${'é'.repeat(250)}-${name}`,
          text: `${'ü'.repeat(70)} ${i}`,
          idempotencyKey: `${name}-${i}-`.padEnd(256, 'k'),
          expected: 70,
        });
        if (result.status !== 'go') throw new Error(`unexpected ${result.status}`);
        await ledger.end(result.id, {
          outcome: 'accepted',
          jobId: `${name}-${i}-`.padEnd(2048, 'j'),
          amount: 70,
          reason: '🙂'.repeat(100),
          file: `/tmp/${'ö'.repeat(500)}`,
        });
      }
      return { calls: task.calls ?? 100 };
    }
    case 'call': {
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 10);
      const started = Date.now();
      const report: CallReport = { status: null, error: null, ms: 0, ticks: 0 };
      try {
        const result = await ledger.begin({
          by: { id: task.person ?? `local:${name}` },
          kind: 'chat',
          tool: 'ask_model',
          model: 'openai/gpt-4o-mini',
          text: `question ${name} ${round}`,
        });
        report.status = result.status;
        if (result.status === 'go') await ledger.end(result.id, { outcome: 'accepted', amount: 10 });
      } catch (error) {
        report.error = { name: (error as Error).name, message: (error as Error).message };
      }
      report.ms = Date.now() - started;
      clearInterval(ticker);
      report.ticks = ticks;
      return report;
    }
    default:
      throw new Error(`no action ${task.action}`);
  }
}

async function openStore(): Promise<Database> {
  const waitMs = task.waitMs ?? 5_000;
  if (task.url) {
    const { openPostgres } = await import('../../src/ledger/postgres.js');
    return openPostgres({ url: task.url, waitMs, log });
  }
  const { openSqlite } = await import('../../src/ledger/sqlite.js');
  return openSqlite({ dir: task.dir, waitMs, log });
}
