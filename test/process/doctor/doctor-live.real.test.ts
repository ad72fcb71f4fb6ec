// `doctor --live` against a new 9router whose only search and fetch provider account has a key
// its provider refuses: the gateway lists the provider (so doctor alone says ✓), and only the
// live calls find out, with the provider's own reason and the fix.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../harness/harness.js';
import { Dashboard } from '../../nine-router/dashboard.js';
import { startTestGateway, type TestGateway } from '../../nine-router/start.js';
import { lineFor } from './report-lines.js';

let gateway: TestGateway;
let apiKey: string;

beforeAll(async () => {
  gateway = await startTestGateway({ configure: false });
  const dashboard = Dashboard.from(gateway.url, gateway.dashboardCookie);
  ({ key: apiKey } = await dashboard.call<{ key: string }>('POST', '/api/keys', { name: 'doctor-live' }));
  // The fake provider refuses every request made with a key that says fault-401.
  await dashboard.call('POST', '/api/providers', {
    provider: 'tavily',
    name: 'tavily',
    apiKey: 'tvly-fault-401',
  });
}, 300_000);

afterAll(async () => {
  await gateway?.stop();
});

describe('doctor --live on 9router, with a provider account its provider refuses', () => {
  it("passes without --live, and fails with it, with the provider's own reason and the fix", async () => {
    const env = { GATEWAY_BASE_URL: gateway.url, GATEWAY_API_KEY: apiKey, CWD: tempDir('gtm-doctor-live-') };
    const listed = await runCli(['doctor'], env, undefined, 30_000);
    expect(lineFor(listed.stdout, /Web search/)).toMatch(/^✓ Web search \(web_search\): tavily/);
    expect(listed.code, listed.stdout).toBe(0);

    const live = await runCli(
      ['doctor', '--live'],
      { ...env, GATEWAY_LEDGER_DIR: tempDir('gtm-doctor-live-ledger-') },
      undefined,
      60_000,
    );
    expect(lineFor(live.stdout, /Live web search/)).toMatch(
      /^✗ Live web search failed: tavily refused the gateway's tavily account/,
    );
    expect(live.stdout).toContain("fix: Fix the provider's account in the gateway's dashboard");
    expect(live.code).toBe(1);
  });
});
