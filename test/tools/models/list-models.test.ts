// list_models on the reference service alone: its own lists as it gives them, and lists it breaks,
// hides or slows on demand. The cases 9router produces too run on both gateways in
// list-models.real.test.ts.
import { describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { connectInMemory, structuredOf, textOf } from '../../harness/harness.js';

interface Listing {
  models: { id: string; capability: string; owned_by: string | null }[];
  defaults: Record<string, string | null>;
  unavailable: { capability: string; reason: string }[];
}

const gw = useGateway({ listTools: true });

const list = (args: Record<string, unknown> = {}) =>
  gw.conn.client.callTool({ name: 'list_models', arguments: args });
const idsOf = (l: Listing, capability: string) =>
  l.models.filter((m) => m.capability === capability).map((m) => m.id);

describe('list_models on the reference service only', () => {
  it('shows each of its lists as the gateway gives it, one request per list', async () => {
    const result = await list();
    expect(result.isError).toBeFalsy();
    const out = structuredOf<Listing>(result);
    expect(idsOf(out, 'chat')).toEqual(['combo-fast', 'openai/gpt-4o-mini', 'anthropic/claude-sonnet-4']);
    expect(idsOf(out, 'search')).toEqual(['tavily']);
    expect(idsOf(out, 'fetch')).toEqual(['jina-reader']);
    expect(idsOf(out, 'transcription')).toContain('groq/whisper-large-v3');
    expect(out.models.find((m) => m.id === 'combo-fast')?.owned_by).toBe('combo');

    const text = textOf(result);
    expect(text).toMatch(
      /^## chat \(ask_model `model`\) — 3\ncombo-fast \(combo\), openai\/gpt-4o-mini \(default\), anthropic/m,
    );
    expect(text).toMatch(
      /^## search \(this server's web_search `provider`, bare ids\) — 1\ntavily \(default\)$/m,
    );
    // One request per list: search and fetch share /v1/models/web, and the default reuses the list.
    expect(gw.service.counters.models).toBe(1);
    expect(gw.service.counters['models.kind']).toBe(3);
  });

  it('filters by capability and serves repeated calls from the cache', async () => {
    const result = await list({ capability: 'speech' });
    const out = structuredOf<Listing>(result);
    expect(new Set(out.models.map((m) => m.capability))).toEqual(new Set(['speech']));
    expect(Object.keys(out.defaults)).toEqual(['speech']);
    expect(textOf(result)).not.toMatch(/## chat/);
    await list({ capability: 'speech' });
    expect(gw.service.counters['models.kind']).toBe(1);
    expect(gw.service.counters.models).toBe(0);
  });

  it('a caller that cancels stops waiting for a shared lookup; the others still get the list', async () => {
    gw.service.inject('models.kind', { delayMs: 600 });
    const controller = new AbortController();
    const cancelled = gw.conn.client.callTool(
      { name: 'list_models', arguments: { capability: 'speech' } },
      undefined,
      { signal: controller.signal },
    );
    const patient = list({ capability: 'speech' });
    setTimeout(() => controller.abort(), 150);
    await expect(cancelled).rejects.toThrow();
    const result = await patient;
    expect(result.isError).toBeFalsy();
    expect(idsOf(structuredOf<Listing>(result), 'speech')).toContain('openai/tts-1');
    expect(gw.service.counters['models.kind']).toBe(1);
  });

  it('still answers when some lists are missing, and says which', async () => {
    gw.service.setModelList('tts', null);
    gw.service.setWebModels(null);
    const result = await list();
    expect(result.isError).toBeFalsy();
    const out = structuredOf<Listing>(result);
    expect(out.unavailable.map((u) => u.capability)).toEqual(['search', 'fetch', 'speech']);
    expect(out.unavailable[2]?.reason).toMatch(/\/v1\/models\/tts answered 404/);
    expect(idsOf(out, 'chat').length).toBe(3);
    expect(textOf(result)).toMatch(
      /## speech[^\n]*\nNot available: the gateway has no list \(\/v1\/models\/tts answered 404\)/,
    );
  });

  it('passes on no control characters from the gateway, in either form', async () => {
    gw.service.setModelList('tts', [
      { id: 'openai/tts-1\u001b[2K\r✓ forged', owned_by: 'openai' },
      { id: 'openai/tts-1-hd', owned_by: 'openai\u001b]0;title\u0007\u009b31m' },
    ]);
    const result = await list({ capability: 'speech' });
    expect(result.isError).toBeFalsy();
    const everything = JSON.stringify(result);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point
    expect(everything).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|\\u001b|\\u009b|\\u0007/);
    expect(everything).not.toContain('forged');
    expect(everything).toContain('openai/tts-1-hd');
  });

  it('shows a configured search provider the gateway does not list, as a bare id', async () => {
    const other = await connectInMemory({
      GATEWAY_BASE_URL: gw.service.url,
      GATEWAY_API_KEY: gw.service.apiKey,
      GATEWAY_SEARCH_MODEL: 'brave/search',
    });
    try {
      const result = await other.client.callTool({ name: 'list_models', arguments: {} });
      expect(structuredOf<Listing>(result).defaults.search).toBe('brave');
      expect(textOf(result)).toMatch(/Default: brave \(configured\)/);
    } finally {
      await other.close();
    }
  });

  it('reports one clear error when every list fails', async () => {
    // 9router lists models without a key; a gateway that checks it there refuses every list.
    for (const route of ['models', 'models.kind'] as const) {
      gw.service.inject(route, { status: 401, message: 'Invalid API key', times: Number.POSITIVE_INFINITY });
    }
    const result = await list({});
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^List models failed: .*401.*Set GATEWAY_API_KEY/);
    gw.service.clearFaults();
    gw.conn.runtime.service.catalog.clear();
    gw.service.inject('models.kind', { status: 500, message: 'lists broke' });
    const partial = await list({ capability: 'transcription' });
    expect(partial.isError).toBe(true);
    expect(textOf(partial)).toMatch(/500.*lists broke/);
  });
});
