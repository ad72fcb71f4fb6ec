// `doctor --live`, and a tool, against a new 9router whose only search and fetch provider is
// tavily, with a key the fake tavily refuses: the gateway lists the provider (so doctor alone says
// ✓), and only the live calls find out, with the provider's own reason and the fix. Then the key
// is fixed in the dashboard while 9router still cools the account down (it repeats the refusal
// for up to 2 minutes): the person is told to wait, not to fix the key again. Last, tavily cannot
// be reached at all (the fake drops the connection): the network, never the key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInMemory, runCli, tempDir, textOf } from '../../harness/harness.js';
import { Dashboard } from '../../nine-router/dashboard.js';
import { startTestGateway, type TestGateway } from '../../nine-router/start.js';
import { lineFor } from './report-lines.js';

let gateway: TestGateway;
let dashboard: Dashboard;
let apiKey: string;
let tavily: string;

beforeAll(async () => {
  gateway = await startTestGateway({ configure: false });
  dashboard = Dashboard.from(gateway.url, gateway.dashboardCookie);
  ({ key: apiKey } = await dashboard.call<{ key: string }>('POST', '/api/keys', { name: 'doctor-live' }));
  // The fake provider refuses every request made with a key that says fault-401.
  ({
    connection: { id: tavily },
  } = await dashboard.call<{ connection: { id: string } }>('POST', '/api/providers', {
    provider: 'tavily',
    name: 'tavily',
    apiKey: 'tvly-fault-401',
  }));
}, 300_000);

afterAll(async () => {
  await gateway?.stop();
});

function doctorLive() {
  const env = { GATEWAY_BASE_URL: gateway.url, GATEWAY_API_KEY: apiKey, CWD: tempDir('gtm-doctor-live-') };
  return runCli(
    ['doctor', '--live'],
    { ...env, GATEWAY_LEDGER_DIR: tempDir('gtm-doctor-live-ledger-') },
    undefined,
    60_000,
  );
}

const setTavilyKey = (key: string) => dashboard.call('PUT', `/api/providers/${tavily}`, { apiKey: key });

describe('doctor --live on 9router', () => {
  it("with a provider account its provider refuses: passes without --live, fails with it, with the provider's own reason and the fix", async () => {
    const env = { GATEWAY_BASE_URL: gateway.url, GATEWAY_API_KEY: apiKey, CWD: tempDir('gtm-doctor-live-') };
    const listed = await runCli(['doctor'], env, undefined, 30_000);
    expect(lineFor(listed.stdout, /Web search/)).toMatch(/^✓ Web search \(web_search\): tavily/);
    expect(listed.code, listed.stdout).toBe(0);

    const live = await doctorLive();
    expect(lineFor(live.stdout, /Live web search/)).toMatch(
      /^✗ Live web search failed: tavily refused the gateway's tavily account/,
    );
    expect(live.stdout).toContain("fix: Fix the provider's account in the gateway's dashboard");
    expect(live.code).toBe(1);
  });

  it('with the key fixed while 9router still cools the account down: says to wait, and how long', async () => {
    await setTavilyKey('tvly-fixed-key');
    const conn = await connectInMemory({ GATEWAY_BASE_URL: gateway.url, GATEWAY_API_KEY: apiKey });
    try {
      const result = await conn.client.callTool({
        name: 'web_search',
        arguments: { query: 'after the fix' },
      });
      const text = textOf(result);
      expect(result.isError, text).toBe(true);
      const wait = Number(
        /Fixed the key already\? The gateway tries the account again in (\d+) s/.exec(text)?.[1],
      );
      expect(wait, text).toBeGreaterThan(60);
      expect(wait).toBeLessThanOrEqual(120);
      expect(text).toContain('repeats this refusal until then');
    } finally {
      await conn.close();
    }
    const live = await doctorLive();
    expect(lineFor(live.stdout, /Live web search/)).toMatch(
      /Fixed the key already\? The gateway tries the account again in \d+ s/,
    );
    expect(live.code).toBe(1);
    // Once the cooldown is over, the fixed key works.
    expect(await dashboard.clearCooldowns()).toBeGreaterThan(0);
    const after = await doctorLive();
    expect(lineFor(after.stdout, /Live web search/)).toMatch(/^✓ Live web search: tavily answered/);
  });

  it('with the provider unreachable from the gateway: the network, not the key, credit or plan', async () => {
    // The fake tavily drops every connection made with a key that says fault-unreachable.
    await setTavilyKey('tvly-fault-unreachable');
    const live = await doctorLive();
    const line = lineFor(live.stdout, /Live web search/);
    expect(line).toMatch(
      /^✗ Live web search failed: The gateway could not reach tavily \(.*fetch failed.*\)/,
    );
    expect(line).toContain('not a refused key');
    const fix = live.stdout.slice(live.stdout.indexOf(line)).split('\n')[1] ?? '';
    expect(fix).toMatch(
      /fix: The gateway could not reach tavily: check the network of the gateway's machine/,
    );
    expect(fix).not.toMatch(/key, credit or plan/);
    expect(live.code).toBe(1);
  });
});
