// `gateway-tools-mcp doctor` (the built CLI) tells the real gateway from what is not one: 9router
// at its address is recognised; a path under it that 9router does not serve (404 pages) is named
// as not a gateway; its dashboard address, which redirects to the login page, is named with that
// target; a closed port cannot be connected to. Whatever is not a gateway gets no ✓ model line.
import { createServer } from 'node:http';
import { describe, expect, it } from 'vitest';
import { type RunResult, runCli, tempDir } from '../../harness/harness.js';
import { useRealGateway } from '../../nine-router/use.js';
import { lineFor, MODEL_LINES } from './report-lines.js';

const gw = useRealGateway();

async function doctor(baseUrl: string): Promise<RunResult> {
  const env = { ...gw.env, GATEWAY_BASE_URL: baseUrl, GATEWAY_MAX_RETRIES: '0', CWD: tempDir('gtm-doctor-') };
  const run = await runCli(['doctor'], env, undefined, 30_000);
  expect(run.stdout + run.stderr).not.toContain(gw.info.apiKey);
  return run;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

describe('doctor knows the real gateway when it sees one', () => {
  it('recognises 9router at its address, and points to no guide', async () => {
    const run = await doctor(gw.info.url);
    expect(run.code, run.stdout).toBe(0);
    expect(lineFor(run.stdout, /Service reachable/)).toBe(
      `✓ Service reachable at ${gw.info.url} (GET /api/health answered ok)`,
    );
    expect(run.stdout).not.toMatch(/No gateway yet/);
  });

  it('names a path 9router does not serve as not a gateway, and skips every model line', async () => {
    const url = `${gw.info.url}/nothing`;
    const run = await doctor(url);
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /does not look like/)).toBe(
      `✗ Something answers at ${url}, but it does not look like a 9router gateway: GET /api/health and GET /v1/models answered 404`,
    );
    expect(run.stdout).toMatch(/fix: Set GATEWAY_BASE_URL to the gateway's address .*No gateway yet\?/);
    for (const what of MODEL_LINES) expect(lineFor(run.stdout, what)).toMatch(/^· .*not checked/);
    expect(await gw.upstream()).toEqual([]);
  });

  it('names the redirect of its dashboard address with the target', async () => {
    const url = `${gw.info.url}/dashboard`;
    const run = await doctor(url);
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /redirects/)).toBe(
      `✗ The gateway's address ${url} redirects to ${gw.info.url}/login (HTTP 307) instead of answering GET /api/health: set GATEWAY_BASE_URL to the gateway's own address, likely ${gw.info.url}`,
    );
    expect(run.stdout).not.toMatch(/not valid JSON/);
    for (const what of MODEL_LINES) expect(lineFor(run.stdout, what)).toMatch(/^· .*not checked/);
  });

  it('cannot connect to a closed port: every model line is skipped, video too, and the guide is named', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const run = await doctor(url);
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /Cannot reach/)).toBe(`✗ Cannot reach the service at ${url} (ECONNREFUSED)`);
    expect(run.stdout).toMatch(
      /fix: Start the gateway .*No gateway yet\? .*docs\/gateway\.md.* shows how to set one up\./,
    );
    for (const what of MODEL_LINES) {
      expect(lineFor(run.stdout, what)).toMatch(/^· .*: not checked \(needs a reachable gateway\)$/);
    }
  });
});
