// `gateway-tools-mcp doctor` (the built CLI) against the real gateway. 9router's model lists
// answer without a key or with a wrong one, so the key is checked on a route that authenticates
// and asks no provider: the journal shows nothing billable reached an upstream.
import { describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../src/doctor/doctor.js';
import { runCli, tempDir } from '../harness/harness.js';
import { useRealGateway } from '../nine-router/use.js';

const gw = useRealGateway();

async function doctor(key: string | undefined, args: string[] = []) {
  const env: Record<string, string> = { ...gw.env, CWD: tempDir('gtm-doctor-') };
  if (key === undefined) delete env.GATEWAY_API_KEY;
  else env.GATEWAY_API_KEY = key;
  const run = await runCli(['doctor', ...args], env, undefined, 30_000);
  expect(run.stdout + run.stderr).not.toContain(gw.info.apiKey);
  if (key) expect(run.stdout + run.stderr).not.toContain(key);
  return run;
}

/** The check line (✓ ✗ ! ·) that mentions `what`. */
const lineFor = (stdout: string, what: RegExp) =>
  stdout.split('\n').find((l) => /^[✓✗!·] /.test(l) && what.test(l)) ?? '';

describe('doctor against 9router', () => {
  it('accepts the right key, and only the free model lists reach an upstream', async () => {
    const run = await doctor(gw.info.apiKey);
    expect(run.code, run.stdout).toBe(0);
    expect(lineFor(run.stdout, /API key/)).toMatch(/^✓ API key accepted \(POST \/v1\/search/);
    expect(lineFor(run.stdout, /Web search/)).toMatch(/^✓ /);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('Ready: every required check passed.');
    // 9router asks its provider nodes for their model lists; nothing else may reach an upstream.
    const sent = await gw.upstream();
    expect(sent.filter((e) => e.method !== 'GET' || !e.path.endsWith('/models'))).toEqual([]);
  });

  it('refuses a wrong key, though the model lists answer it', async () => {
    const modelList = await fetch(`${gw.info.url}/v1/models`, {
      headers: { authorization: 'Bearer sk-wrong-key-0123456789' },
    });
    expect(modelList.status).toBe(200);

    const run = await doctor('sk-wrong-key-0123456789');
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /API key/)).toBe('✗ The service refused the API key (401): Invalid API key');
    expect(run.stdout).toMatch(/\n {4}fix: Set GATEWAY_API_KEY \(or GATEWAY_API_KEY_FILE\)/);
    expect(lineFor(run.stdout, /Web search/)).toMatch(/^· .*not checked \(needs an accepted API key\)/);
    expect(run.stdout).toMatch(/Not ready: 1 required check\(s\) failed/);
    // Only the model list asked above reached an upstream (9router asks its provider nodes).
    expect((await gw.upstream()).filter((e) => !e.path.endsWith('/models'))).toEqual([]);
  });

  it('says a key is needed when none is set', async () => {
    const run = await doctor(undefined, ['--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as DoctorReport;
    expect(report.api_key).toBe('not set');
    expect(report.checks.find((c) => c.id === 'api_key')).toMatchObject({
      status: 'fail',
      message: 'No API key set, and the service requires one (401): Missing API key',
      fix: expect.stringMatching(/GATEWAY_API_KEY/),
    });
    expect(await gw.upstream()).toEqual([]);
  });
});
