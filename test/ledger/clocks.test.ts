// The SQLite ledger shared by real processes whose clocks differ, as libfaketime makes them (each
// process of one machine told another time): a day's and an hour's limit hold exactly across a
// process a day or two hours behind, and a process 40 days ahead removes none of the calls a
// process with the right clock still counts.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger/ledger.js';
import { PROJECT_ROOT, tempDir } from '../harness/harness.js';
import { systemHas } from '../harness/requires.js';
import { exported } from './ledger-fixture.js';

const HAS_FAKETIME = systemHas('faketime', 'the ledger tests of processes with different clocks');
const LEDGER_MODULE = join(PROJECT_ROOT, 'src/ledger/ledger.ts');

/** A server process's use of the ledger: `videos` submits, then `chats` questions, each ended accepted. */
const PROCESS = `
const { Ledger } = await import(process.env.LEDGER_MODULE);
const { parseLimits } = await import(process.env.LIMITS_MODULE);
const task = JSON.parse(process.env.LEDGER_TASK);
const quiet = () => {};
const log = { level: 'error', error: quiet, warn: quiet, info: quiet, debug: quiet };
const ledger = Ledger.open({ dir: task.dir, limits: parseLimits(task.limits).value, log, keptCalls: task.keptCalls });
const statuses = [];
const calls = [
  ...Array.from({ length: task.videos }, (_, i) => ({ kind: 'video', by: { id: task.name }, tool: 'video_generate', model: 'xai/grok-imagine-video', text: task.name + ' video ' + i })),
  ...Array.from({ length: task.chats }, (_, i) => ({ kind: 'chat', by: { id: task.name }, tool: 'ask_model', model: 'openai/gpt-4o-mini', text: task.name + ' question ' + i })),
];
for (const call of calls) {
  const result = await ledger.begin(call);
  statuses.push(result.status);
  if (result.status === 'go') await ledger.end(result.id, { outcome: 'accepted' });
}
// A server lives on after its calls: the removal of old calls a begin scheduled runs meanwhile.
await new Promise((resolve) => setTimeout(resolve, 200));
await ledger.close();
process.stdout.write(JSON.stringify({ statuses, clock: Date.now() }));
`;

interface Task {
  dir: string;
  name: string;
  limits: string;
  /** libfaketime's offset for the process's clock: `-26h`, `+40d`; absent: the machine's. */
  offset?: string;
  videos?: number;
  chats?: number;
  keptCalls?: number;
}

/** Runs one server process to its end: what each of its begins answered, and the time it saw. */
function serverProcess(task: Task): Promise<{ statuses: string[]; clock: number }> {
  const node = [process.execPath, '--import', 'tsx', '--input-type=module', '-e', PROCESS];
  const [command, ...args] = task.offset ? ['faketime', '-f', task.offset, ...node] : node;
  const env = {
    ...process.env,
    LEDGER_MODULE,
    LIMITS_MODULE: join(PROJECT_ROOT, 'src/config/limits.ts'),
    LEDGER_TASK: JSON.stringify({ videos: 0, chats: 0, ...task }),
  };
  return new Promise((resolve, reject) =>
    execFile(
      command as string,
      args,
      { cwd: PROJECT_ROOT, env, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${task.name} failed: ${error.message} ${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    ),
  );
}

const went = (...runs: { statuses: string[] }[]) =>
  runs.flatMap((run) => run.statuses).filter((status) => status === 'go').length;

describe.runIf(HAS_FAKETIME)('processes whose clocks differ, on SQLite', () => {
  it.runIf(HAS_FAKETIME)(
    'holds a day’s limit exactly with a process a day and two hours behind',
    async () => {
      const dir = tempDir('gtm-clocks-');
      const limits = 'video=3/day';
      const behind = await serverProcess({ dir, name: 'behind', limits, offset: '-26h', videos: 3 });
      const right = await serverProcess({ dir, name: 'right', limits, videos: 3 });
      // The process behind was told a time more than a day ago.
      expect(right.clock - behind.clock).toBeGreaterThan(26 * 3_600_000 - 60_000);
      expect(went(behind, right)).toBe(3);
      const again = await serverProcess({ dir, name: 'behind again', limits, offset: '-26h', videos: 3 });
      expect(again.statuses).toEqual(['limited', 'limited', 'limited']);
    },
    120_000,
  );

  it.runIf(HAS_FAKETIME)(
    'holds an hour’s limit exactly with a process two hours behind',
    async () => {
      const dir = tempDir('gtm-clocks-');
      const limits = 'video=5/hour';
      const right = await serverProcess({ dir, name: 'right', limits, videos: 3 });
      const behind = await serverProcess({ dir, name: 'behind', limits, offset: '-2h', videos: 3 });
      const rightAgain = await serverProcess({ dir, name: 'right again', limits, videos: 1 });
      expect(went(right, behind, rightAgain)).toBe(5);
      expect(rightAgain.statuses).toEqual(['limited']);
    },
    120_000,
  );

  it.runIf(HAS_FAKETIME)(
    'removes none of today’s calls when a process 40 days ahead sweeps',
    async () => {
      const dir = tempDir('gtm-clocks-');
      const limits = 'video=3/day';
      const today = await serverProcess({ dir, name: 'today', limits, videos: 3 });
      expect(today.statuses).toEqual(['go', 'go', 'go']);
      // Many calls recorded since today's, as a busy ledger has: only the last is kept whatever its time.
      const ahead = await serverProcess({
        dir,
        name: 'ahead',
        limits,
        offset: '+40d',
        chats: 2,
        keptCalls: 1,
      });
      expect(ahead.statuses).toEqual(['go', 'go']);
      const log = { level: 'error' as const, error() {}, warn() {}, info() {}, debug() {} };
      const reader = Ledger.read({ dir, log });
      const words = (await exported(reader)).map((call) => call.words);
      await reader.close();
      expect(words).toEqual([
        ...[0, 1, 2].map((i) => `today video ${i}`),
        'ahead question 0',
        'ahead question 1',
      ]);
      const after = await serverProcess({ dir, name: 'after', limits, videos: 1 });
      expect(after.statuses).toEqual(['limited']);
    },
    120_000,
  );
});
