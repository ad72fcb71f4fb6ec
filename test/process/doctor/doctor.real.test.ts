// `gateway-tools-mcp doctor` (the built CLI) and the API key, on both gateways (describe.each). Both
// list models without a key, so the key is checked on a route that authenticates and asks no
// provider. What only the reference service makes (a gateway gone, missing providers, forged
// model ids, no health route) is in doctor.test.ts; 9router's journal proves no provider was asked.
import { describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../../src/doctor/doctor.js';
import { BACKENDS, billableRequests } from '../../harness/backends.js';
import { runCli, tempDir } from '../../harness/harness.js';
import { useRealGateway } from '../../nine-router/use.js';
import { lineFor } from './report-lines.js';

const WRONG_KEY = 'sk-wrong-key-0123456789';

/** Runs doctor with `key` (none when undefined) and checks no key is ever printed. */
async function doctor(env: Record<string, string>, key: string | undefined, args: string[] = []) {
  const settings: Record<string, string> = { ...env, CWD: tempDir('gtm-doctor-') };
  const rightKey = env.GATEWAY_API_KEY ?? '';
  if (key === undefined) delete settings.GATEWAY_API_KEY;
  else settings.GATEWAY_API_KEY = key;
  const run = await runCli(['doctor', ...args], settings, undefined, 30_000);
  expect(run.stdout + run.stderr).not.toContain(rightKey);
  if (key) expect(run.stdout + run.stderr).not.toContain(key);
  return run;
}

describe.each(BACKENDS)('doctor and the API key on %s', (_name, use) => {
  const backend = use();

  it('accepts the right key, checked where nothing is spent, and says it is ready', async () => {
    const run = await doctor(backend.env, backend.apiKey);
    expect(run.code, run.stdout).toBe(0);
    expect(lineFor(run.stdout, /API key/)).toMatch(/^✓ API key accepted \(POST \/v1\/search/);
    expect(lineFor(run.stdout, /Web search/)).toMatch(/^✓ /);
    expect(run.stdout.trim().split('\n').at(-2)).toBe('Ready: every required check passed (1 warning).');
  });

  it('with --live, proves search and fetch through the providers, each sent once', async () => {
    const before = await billableRequests(backend);
    const start = backend.reference?.requests.length ?? 0;
    const run = await doctor(
      { ...backend.env, GATEWAY_LEDGER_DIR: tempDir('gtm-doctor-live-') },
      backend.apiKey,
      ['--live'],
    );
    expect(run.code, run.stdout).toBe(0);
    expect(run.stderr).toContain('doctor --live sends one web search and one web fetch');
    expect(lineFor(run.stdout, /Live web search/)).toMatch(/^✓ Live web search: \S+ answered/);
    expect(lineFor(run.stdout, /Live web fetch/)).toMatch(/^✓ Live web fetch: \S+ answered/);
    // The two live calls each reached a provider, once (the key check's empty search asks none:
    // 9router's journal has no entry for it, the reference service's request has no query).
    const live = backend.reference
      ? backend.reference.requests
          .slice(start)
          .filter(
            (r) => r.route === 'fetch' || (r.route === 'search' && (r.body as { query?: string }).query),
          )
      : (await billableRequests(backend)).slice(before.length);
    expect(live).toHaveLength(2);
  });

  it('refuses a wrong key with the fix, and checks nothing that needs one', async () => {
    const run = await doctor(backend.env, WRONG_KEY);
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /API key/)).toBe('✗ The service refused the API key (401): Invalid API key');
    expect(run.stdout).toMatch(/\n {4}fix: Set GATEWAY_API_KEY \(or GATEWAY_API_KEY_FILE\)/);
    expect(lineFor(run.stdout, /Web search/)).toMatch(/^· .*not checked \(needs an accepted API key\)/);
    expect(run.stdout).toMatch(/Not ready: 1 required check\(s\) failed/);
  });

  it('says a key is needed when none is set', async () => {
    const run = await doctor(backend.env, undefined, ['--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as DoctorReport;
    expect(report.api_key).toBe('not set');
    expect(report.checks.find((c) => c.id === 'api_key')).toMatchObject({
      status: 'fail',
      message: 'No API key set, and the service requires one (401): Missing API key',
      fix: expect.stringMatching(/GATEWAY_API_KEY/),
    });
  });
});

describe('doctor on 9router only', () => {
  const gw = useRealGateway();

  it('asks no provider with the right key: only the free model lists reach an upstream', async () => {
    const run = await doctor(gw.env, gw.info.apiKey);
    expect(run.code, run.stdout).toBe(0);
    // 9router asks its provider nodes for their model lists; nothing else may reach an upstream.
    const sent = await gw.upstream();
    expect(sent.filter((e) => e.method !== 'GET' || !e.path.endsWith('/models'))).toEqual([]);
  });

  it('refuses a wrong key, though the model lists answer it, asking no provider', async () => {
    const modelList = await fetch(`${gw.info.url}/v1/models`, {
      headers: { authorization: `Bearer ${WRONG_KEY}` },
    });
    expect(modelList.status).toBe(200);
    expect((await doctor(gw.env, WRONG_KEY)).code).toBe(1);
    // Only the model lists reached an upstream (9router asks its provider nodes).
    expect((await gw.upstream()).filter((e) => !e.path.endsWith('/models'))).toEqual([]);
  });

  it('asks nothing upstream when no key is set', async () => {
    expect((await doctor(gw.env, undefined, ['--json'])).code).toBe(1);
    expect(await gw.upstream()).toEqual([]);
  });
});
