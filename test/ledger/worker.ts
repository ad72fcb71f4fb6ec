// A server process's use of the ledger, stripped to the calls: the tests start several of these at
// once (`node --import tsx test/ledger/worker.ts '<json>'`) to race them on one directory.
//
// It says `ready` on stdout once its ledger is open, waits for `go` on stdin, does its part and
// prints one line of JSON with what happened. Warnings go to stderr.

import { createInterface } from 'node:readline';
import { Ledger } from '../../src/ledger/ledger.js';
import { parseLimits } from '../../src/ledger/limits.js';

export interface WorkerTask {
  dir: string;
  limits?: string;
  /**
   * race: `calls` video submits at once, each ended accepted. hang: one submit begun and never
   * ended (the test kills the process). many: `calls` submits one after another, with the longest
   * fields a record can have.
   */
  action: 'race' | 'hang' | 'many';
  calls?: number;
  name?: string;
}

const task = JSON.parse(process.argv[2] ?? '{}') as WorkerTask;
const limits = parseLimits(task.limits ?? '');
if (!limits.ok) throw new Error(limits.error);
const warn = (message: string) => process.stderr.write(`warn: ${message}\n`);
const ledger = Ledger.open({
  dir: task.dir,
  limits: limits.value,
  log: { level: 'debug', error: warn, warn, info: () => {}, debug: () => {} },
});

const lines = createInterface({ input: process.stdin });
const go = new Promise<void>((resolve) => lines.on('line', (line) => line === 'go' && resolve()));
process.stdout.write('ready\n');
await go;

const name = task.name ?? String(process.pid);
if (task.action === 'race') {
  const outcomes = await Promise.all(
    Array.from({ length: task.calls ?? 2 }, async (_, i) => {
      const result = await ledger.begin({
        kind: 'video',
        tool: 'video_generate',
        model: 'xai/grok-imagine-video',
        text: `video ${name} ${i}`,
        idempotencyKey: `key-${name}-${i}`,
      });
      if (result.status === 'go')
        await ledger.end(result.id, { outcome: 'accepted', jobId: `vj_${name}_${i}` });
      return result.status;
    }),
  );
  done({ outcomes });
} else if (task.action === 'hang') {
  const result = await ledger.begin({
    kind: 'video',
    tool: 'video_generate',
    model: 'xai/grok-imagine-video',
    text: 'a lighthouse in a storm, slow zoom out, at dusk',
    idempotencyKey: `key-${name}`,
  });
  done({ status: result.status, id: result.status === 'go' ? result.id : null });
  setInterval(() => {}, 60_000); // the request "in flight" until the test kills this process
} else {
  for (let i = 0; i < (task.calls ?? 100); i++) {
    const result = await ledger.begin({
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
  done({ calls: task.calls ?? 100 });
}

function done(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
  lines.close();
  if (task.action !== 'hang') process.exit(0);
}
