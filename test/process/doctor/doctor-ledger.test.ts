// doctor's lines about billed calls (the built CLI, on the reference service): the ledger's folder
// and whether it can be written, the limits in force with what they leave, the prices. Nothing is
// spent and no folder is made.

import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../../src/doctor/doctor.js';
import { Ledger } from '../../../src/ledger/ledger.js';
import { runCli, tempDir } from '../../harness/harness.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';

const SECRET = 'sk-doctor-ledger-0123456789abcdef';
const quiet = { level: 'error' as const, error() {}, warn() {}, info() {}, debug() {} };
let service: ReferenceService;

beforeAll(async () => {
  service = await startReferenceService({ apiKey: SECRET });
});
afterAll(() => service.close());

async function doctor(env: Record<string, string>) {
  const run = await runCli(['doctor'], {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: SECRET,
    GATEWAY_TOOLS: 'search,fetch',
    ...env,
  });
  const json = await runCli(['doctor', '--json'], {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: SECRET,
    GATEWAY_TOOLS: 'search,fetch',
    ...env,
  });
  return { ...run, report: JSON.parse(json.stdout) as DoctorReport };
}

/** The check line (✓ ✗ ! ·) that starts with `start`, and the fix line after it, if any. */
function lineOf(stdout: string, start: string): { line: string; fix: string | undefined } {
  const lines = stdout.split('\n');
  const at = lines.findIndex((l) => /^[✓✗!·] /.test(l) && l.slice(2).startsWith(start));
  const next = lines[at + 1];
  return { line: lines[at] ?? '', fix: next?.startsWith('    fix: ') ? next.slice(9) : undefined };
}

async function recordVideos(dir: string, count: number): Promise<void> {
  const ledger = Ledger.open({ dir, log: quiet });
  for (let i = 0; i < count; i++) {
    const begun = await ledger.begin({
      by: { id: 'local:test' },
      kind: 'video',
      tool: 'video_generate',
      model: 'xai/grok-imagine-video',
      text: `video ${i}`,
    });
    if (begun.status !== 'go') throw new Error(begun.status);
    await ledger.end(begun.id, { outcome: 'accepted', jobId: `vj_${i}`, amount: 10 });
  }
  await ledger.close();
}

describe('doctor on billed calls', () => {
  it('says where the ledger will be, that there are no limits, and makes no folder', async () => {
    const dir = join(tempDir(), 'ledger');
    const run = await doctor({ GATEWAY_LEDGER_DIR: dir });
    expect(run.code).toBe(0);
    expect(lineOf(run.stdout, 'Ledger').line).toMatch(
      new RegExp(
        `^✓ Ledger of billed calls ${dir} does not exist yet; it will be created on the first billed call \\(.* is writable\\)$`,
      ),
    );
    expect(lineOf(run.stdout, 'Limits').line).toBe(
      '✓ Limits: none (GATEWAY_LIMITS is not set), so billed calls are not bounded',
    );
    expect(run.stdout).not.toContain('Prices');
    expect(existsSync(dir)).toBe(false);
  });

  it('shows the limits in force with what they leave across processes, and when a used-up one frees', async () => {
    const dir = tempDir('gtm-ledger-');
    await recordVideos(dir, 2);
    const run = await doctor({
      GATEWAY_LEDGER_DIR: dir,
      GATEWAY_LIMITS: 'video=2/day,chat=100/hour,speech=3/session',
      GATEWAY_PRICES: 'xai/*=0.05/second',
    });
    // A used-up limit is a warning, not a failure: the server works, those calls wait.
    expect(run.code).toBe(0);
    expect(lineOf(run.stdout, 'Ledger').line).toBe(`✓ Ledger of billed calls writable: ${dir}`);
    const limits = lineOf(run.stdout, 'Limits');
    expect(limits.line).toMatch(
      /^! Limits \(GATEWAY_LIMITS\), across this user's server processes: video=2\/day \(2 used, none left: the next call is possible at \d{4}-\d\d-\d\d \d\d:\d\d UTC \(in (23 h 59 min|24 h 0 min)\)\); chat=100\/hour \(0 used, 100 left\); speech=3\/session \(counted in each server process\)$/,
    );
    expect(limits.fix).toBe(
      'Wait until the time it says, or raise the limit in GATEWAY_LIMITS and restart the server.',
    );
    expect(lineOf(run.stdout, 'Prices').line).toBe(
      '✓ Prices (GATEWAY_PRICES): xai/*=0.05/second; estimated cost in the last 24 hours: 1.00',
    );
    expect(run.report.checks.filter((c) => ['ledger', 'limits', 'prices'].includes(c.id))).toEqual([
      expect.objectContaining({ id: 'ledger', status: 'ok', required: true }),
      expect.objectContaining({ id: 'limits', status: 'warn', required: false }),
      expect.objectContaining({ id: 'prices', status: 'ok', required: false }),
    ]);
    // Only the database the calls were written to: no probe, nothing left open.
    expect(readdirSync(dir)).toEqual(['ledger.sqlite']);
  });

  it('warns that a cost limit stops nothing without prices', async () => {
    const run = await doctor({ GATEWAY_LIMITS: 'cost=5/day' });
    const limits = lineOf(run.stdout, 'Limits');
    expect(limits.line).toMatch(
      /^! .*cost=5\/day \(0 used, 5.00 left\); a cost limit never stops a call while GATEWAY_PRICES is empty$/,
    );
    expect(limits.fix).toMatch(/^Set GATEWAY_PRICES/);
  });

  it('fails when the ledger cannot be written: billed calls would not be sent', async () => {
    const file = join(tempDir(), 'a-file');
    writeFileSync(file, 'x');
    const run = await doctor({ GATEWAY_LEDGER_DIR: join(file, 'ledger'), GATEWAY_LIMITS: 'video=1/day' });
    expect(run.code).toBe(1);
    const ledger = lineOf(run.stdout, 'Ledger');
    expect(ledger.line).toBe(
      `✗ Ledger of billed calls ${join(file, 'ledger')} cannot be created: ${file} is not a directory`,
    );
    expect(ledger.fix).toBe(
      'Set GATEWAY_LEDGER_DIR to a directory this user can write, or fix its permissions: a billed call the ledger cannot record is not sent.',
    );
    expect(lineOf(run.stdout, 'Limits').line).toMatch(
      /^! Limits \(GATEWAY_LIMITS\): video=1\/day; how much of them is used is unknown\. The ledger of billed calls at .* lies below a file, not a folder/,
    );
  });
});
