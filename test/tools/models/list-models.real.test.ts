// list_models on both gateways: the cases both can produce run on each (describe.each): every
// capability at once with the defaults the tools use, speech and video, a configured default the
// gateway does not list. Each gateway's own chat, search, fetch and transcription lists: 9router's
// at the end, the reference service's (and lists it breaks on demand) in list-models.test.ts.
import { describe, expect, it } from 'vitest';
import { BACKENDS, type BackendName, billableRequests } from '../../harness/backends.js';
import { type Connected, connectInMemory, structuredOf, textOf } from '../../harness/harness.js';
import { useRealGateway } from '../../nine-router/use.js';

interface Listed {
  models: { id: string; capability: string; owned_by: string | null }[];
  defaults: Record<string, string | null>;
  unavailable: { capability: string; reason: string }[];
}

async function listOn(target: Connected, capability?: string) {
  const result = await target.client.callTool({
    name: 'list_models',
    arguments: capability ? { capability } : {},
  });
  expect(result.isError, textOf(result)).toBeFalsy();
  return { result, out: structuredOf<Listed>(result) };
}

const ids = (out: Listed) => out.models.map((m) => m.id);

/** The model each tool uses by default on each gateway. */
const DEFAULTS: Record<BackendName, Record<string, string>> = {
  'the reference service': {
    chat: 'openai/gpt-4o-mini',
    search: 'tavily',
    fetch: 'jina-reader',
    speech: 'openai/tts-1',
    transcription: 'groq/whisper-large-v3',
    video: 'xai/grok-imagine-video',
  },
  '9router': {
    chat: 'xai/grok-4.6',
    search: 'search-combo',
    fetch: 'tavily',
    speech: 'openai/tts-1',
    transcription: 'openai/whisper-1',
    video: 'xai/grok-imagine-video',
  },
};

describe.each(BACKENDS)('list_models on %s', (name, use) => {
  const backend = use();
  const list = (capability?: string) => listOn(backend.conn, capability);

  it('lists every capability at once, grouped, with the defaults the tools use, for free', async () => {
    const { result, out } = await list();
    const capabilities = [...new Set(out.models.map((m) => m.capability))];
    expect(capabilities).toEqual(['chat', 'search', 'fetch', 'speech', 'transcription', 'video']);
    expect(out.defaults).toEqual(DEFAULTS[name]);
    expect(out.unavailable).toEqual([]);
    const text = textOf(result);
    const headings = text
      .split('\n')
      .filter((l) => l.startsWith('## '))
      .map((l) => l.slice(3, l.indexOf(' (')));
    expect(headings).toEqual(capabilities);
    expect(text).not.toContain('{"');
    expect(await billableRequests(backend)).toEqual([]);
  });

  it('lists speech models as the gateway names them, and says how voices are given', async () => {
    const { result, out } = await list('speech');
    expect(ids(out)).toEqual([
      'openai/tts-1',
      'openai/tts-1-hd',
      'openai/gpt-4o-mini-tts',
      'selfhosted-tts/kokoro',
    ]);
    expect(out.models.every((m) => m.capability === 'speech')).toBe(true);
    expect(Object.keys(out.defaults)).toEqual(['speech']);
    const text = textOf(result);
    // Speech models are provider/model; the voice is given apart, and the default's voice is named.
    expect(text).toContain(
      '## speech (audio_speech `model` as provider/model with `voice`, or provider/model/voice) — 4\n' +
        'openai/tts-1 (default, voice alloy), openai/tts-1-hd, openai/gpt-4o-mini-tts, selfhosted-tts/kokoro\n',
    );
    // How voices are given ends the text, as it is the structured `next`.
    expect(text.slice(text.lastIndexOf('\n') + 1)).toBe(
      'Voices: openai — alloy, ash, ballad, coral, echo, fable, nova, onyx, sage, shimmer, verse with ' +
        'gpt-4o-mini-tts only (default alloy); selfhosted-tts — its own voice names (default: its own).',
    );
    expect(text).not.toMatch(/## chat/);
  });

  it('names the known video model: the gateway has no video list', async () => {
    const { result, out } = await list('video');
    expect(out.models).toEqual([{ id: 'xai/grok-imagine-video', capability: 'video', owned_by: 'xai' }]);
    expect(out.defaults).toEqual({ video: 'xai/grok-imagine-video' });
    expect(textOf(result)).toMatch(/the gateway has no list, these are the known ids/);
  });

  it('shows a configured default that the gateway does not list', async () => {
    const conn = await connectInMemory({
      ...backend.env,
      GATEWAY_CHAT_MODEL: 'fakechat/small',
      GATEWAY_VIDEO_MODEL: 'xai/grok-imagine-video-2',
    });
    try {
      const chat = await listOn(conn, 'chat');
      expect(chat.out.defaults).toEqual({ chat: 'fakechat/small' });
      expect(textOf(chat.result)).toMatch(/\nDefault: fakechat\/small \(configured\)$/);
      const video = await listOn(conn, 'video');
      expect(ids(video.out)).toEqual(['xai/grok-imagine-video-2', 'xai/grok-imagine-video']);
    } finally {
      await conn.close();
    }
  });

  it('rejects an unknown capability', async () => {
    const result = await backend.conn.client.callTool({
      name: 'list_models',
      arguments: { capability: 'images' },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('capability');
  });
});

describe('list_models on 9router only', () => {
  const gw = useRealGateway();
  const list = (capability?: string) => listOn(gw.conn, capability);

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
});
