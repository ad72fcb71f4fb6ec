import { describe, expect, it } from 'vitest';
import { connectInMemory, structuredOf, textOf } from '../../harness/harness.js';
import { useRealGateway } from '../../nine-router/use.js';

const gw = useRealGateway();

interface Listed {
  models: { id: string; capability: string; owned_by: string | null }[];
  defaults: Record<string, string | null>;
  unavailable: { capability: string; reason: string }[];
}

async function list(capability?: string, client = gw.conn.client) {
  const result = await client.callTool({ name: 'list_models', arguments: capability ? { capability } : {} });
  expect(result.isError, textOf(result)).toBeFalsy();
  return { result, out: structuredOf<Listed>(result) };
}

const ids = (out: Listed) => out.models.map((m) => m.id);

describe('list_models against 9router', () => {
  it('lists the catalogue chat models of the configured providers, defaulting to the first', async () => {
    const { result, out } = await list('chat');
    expect(out.models.length).toBeGreaterThan(20);
    expect(out.models.every((m) => m.capability === 'chat')).toBe(true);
    expect(ids(out)).toEqual(
      expect.arrayContaining(['xai/grok-4.6', 'openai/gpt-4o-mini', 'groq/llama-3.3-70b-versatile']),
    );
    expect(out.models[0]).toEqual({ id: 'xai/grok-4.6', capability: 'chat', owned_by: 'xai' });
    expect(out.defaults).toEqual({ chat: 'xai/grok-4.6' });
    expect(out.unavailable).toEqual([]);
    expect(textOf(result)).toMatch(
      /^## chat \(ask_model `model`\) — \d+\nxai\/grok-4\.6 \(default\), xai\/grok-4\.5, /,
    );
  });

  it('lists search providers as bare ids, the combo first and marked', async () => {
    const { result, out } = await list('search');
    expect(out.models).toEqual([
      { id: 'search-combo', capability: 'search', owned_by: 'combo' },
      { id: 'tavily', capability: 'search', owned_by: 'tavily' },
      { id: 'exa', capability: 'search', owned_by: 'exa' },
      { id: 'serper', capability: 'search', owned_by: 'serper' },
      { id: 'brave', capability: 'search', owned_by: 'brave' },
    ]);
    expect(out.defaults).toEqual({ search: 'search-combo' });
    expect(textOf(result)).toBe(
      "## search (this server's web_search `provider`, bare ids) — 5\nsearch-combo (combo, default), tavily, exa, serper, brave",
    );
  });

  it('lists fetch providers as bare ids', async () => {
    const { result, out } = await list('fetch');
    expect(ids(out)).toEqual(['tavily', 'exa', 'jina-reader', 'firecrawl']);
    expect(out.defaults).toEqual({ fetch: 'tavily' });
    expect(textOf(result)).toBe(
      "## fetch (this server's web_fetch `provider`, bare ids) — 4\ntavily (default), exa, jina-reader, firecrawl",
    );
  });

  it('lists speech models as the gateway names them', async () => {
    const { out } = await list('speech');
    expect(ids(out)).toEqual([
      'openai/tts-1',
      'openai/tts-1-hd',
      'openai/gpt-4o-mini-tts',
      'selfhosted-tts/kokoro',
    ]);
    expect(out.models.every((m) => m.capability === 'speech')).toBe(true);
  });

  it('lists transcription models, defaulting to the first', async () => {
    const { result, out } = await list('transcription');
    expect(ids(out)).toEqual([
      'openai/whisper-1',
      'openai/gpt-4o-transcribe',
      'openai/gpt-4o-mini-transcribe',
      'groq/whisper-large-v3',
      'groq/whisper-large-v3-turbo',
      'groq/distil-whisper-large-v3-en',
      'selfhosted-stt/whisper-1',
    ]);
    expect(out.defaults).toEqual({ transcription: 'openai/whisper-1' });
    expect(textOf(result)).toMatch(
      /^## transcription \(audio_transcribe `model`\) — 7\nopenai\/whisper-1 \(default\), /,
    );
  });

  it('names the known video model: the gateway has no video list', async () => {
    const { result, out } = await list('video');
    expect(out.models).toEqual([{ id: 'xai/grok-imagine-video', capability: 'video', owned_by: 'xai' }]);
    expect(out.defaults).toEqual({ video: 'xai/grok-imagine-video' });
    expect(textOf(result)).toMatch(/the gateway has no list, these are the known ids/);
  });

  it('lists every capability at once', async () => {
    const { result, out } = await list();
    const capabilities = [...new Set(out.models.map((m) => m.capability))];
    expect(capabilities).toEqual(['chat', 'search', 'fetch', 'speech', 'transcription', 'video']);
    expect(out.defaults).toMatchObject({
      search: 'search-combo',
      fetch: 'tavily',
      transcription: 'openai/whisper-1',
    });
    expect(out.unavailable).toEqual([]);
    const headings = textOf(result)
      .split('\n')
      .filter((l) => l.startsWith('## '))
      .map((l) => l.slice(3, l.indexOf(' (')));
    expect(headings).toEqual(['chat', 'search', 'fetch', 'speech', 'transcription', 'video']);
    // Listing is free: at most the gateway asks its provider nodes for their model lists.
    const journal = await gw.upstream();
    expect(journal.filter((e) => e.method !== 'GET' || !e.path.endsWith('/models'))).toEqual([]);
  });

  it('shows a configured default that the gateway does not list', async () => {
    const conn = await connectInMemory({ ...gw.env, GATEWAY_CHAT_MODEL: 'fakechat/small' });
    try {
      const { result, out } = await list('chat', conn.client);
      expect(out.defaults).toEqual({ chat: 'fakechat/small' });
      expect(textOf(result)).toMatch(/\nDefault: fakechat\/small \(configured\)$/);
    } finally {
      await conn.close();
    }
  });
});
