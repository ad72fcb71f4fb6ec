// `doctor --live` (the built CLI): one real search and one real fetch, sent by the tools through
// the providers they would use, said before they are sent, recorded in the ledger like any billed
// call; a provider that refuses is ✗ with its own reason and the fix, and doctor fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../harness/harness.js';
import { ledgerCalls } from '../../harness/ledger.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';

let service: ReferenceService;
beforeAll(async () => {
  service = await startReferenceService();
});
afterAll(async () => {
  await service?.close();
});

function doctorLive(ledgerDir: string) {
  return runCli(['doctor', '--live'], {
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_LEDGER_DIR: ledgerDir,
  });
}

describe('doctor --live', () => {
  it('says what it sends first, then proves search and fetch, each recorded in the ledger', async () => {
    service.reset();
    const ledger = tempDir('gtm-doctor-live-');
    const run = await doctorLive(ledger);
    expect(run.stderr).toContain('doctor --live sends one web search and one web fetch');
    expect(run.stdout).toMatch(
      /^✓ Live web search: tavily answered \(billed by it, recorded in the ledger\)$/m,
    );
    expect(run.stdout).toMatch(
      /^✓ Live web fetch: jina-reader answered \(billed by it, recorded in the ledger\)$/m,
    );
    expect(run.code).toBe(0);
    // The key check's empty search is refused before any provider; these two reached one.
    const sent = service.requests.filter(
      (r) => r.route === 'fetch' || (r.route === 'search' && (r.body as { query?: string }).query),
    );
    expect(sent.map((r) => r.route)).toEqual(['search', 'fetch']);
    expect(ledgerCalls(ledger).map((c) => [c.begin.tool, c.end?.outcome])).toEqual([
      ['web_search', 'accepted'],
      ['web_fetch', 'accepted'],
    ]);
  });

  it("fails with the provider's own reason and the fix when the provider refuses", async () => {
    service.reset();
    service.inject('search', {
      status: 401,
      message: '[tavily] tavily returned 401: invalid api key',
      times: 5,
    });
    const run = await doctorLive(tempDir('gtm-doctor-live-'));
    expect(run.stdout).toMatch(
      /^✗ Live web search failed: tavily refused the gateway's tavily account \(tavily returned 401: invalid api key\)/m,
    );
    expect(run.stdout).toContain("fix: Fix the provider's account in the gateway's dashboard");
    expect(run.code).toBe(1);
  });

  it('sends nothing without --live', async () => {
    service.reset();
    const run = await runCli(['doctor'], { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey });
    expect(run.stdout).not.toContain('Live web');
    expect(
      service.requests.filter((r) => r.route === 'search' && (r.body as { query?: string }).query),
    ).toEqual([]);
  });
});
