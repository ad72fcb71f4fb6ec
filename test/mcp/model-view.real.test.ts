// What each major client's model sees of every tool's result, against the real gateway: an SDK
// Client introduces itself as the real client does (its clientInfo), the server shapes results
// for it, and the result is rendered the way that client hands it to its model
// (test/harness/model-view.ts). Every rendering must carry the facts and the next step, never a
// page twice, never a hint naming a tool the client may shadow; and for a client the server does
// not know, each form alone (structured content, text) must carry everything.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClientSession, connectAs } from '../harness/client-session.js';
import { connectStdio, structuredOf, tempDir, textOf } from '../harness/harness.js';
import {
  MODEL_VIEW_CLIENTS,
  type ModelViewClient,
  modelViewClient,
  occurrences,
} from '../harness/model-view.js';
import { unique, useRealGateway } from '../nine-router/use.js';

let cwd: string;
beforeAll(() => {
  cwd = tempDir('gtm-model-view-');
});
const gw = useRealGateway({ env: () => ({ CWD: cwd }) });

type Fact = string | RegExp;

interface Scenario {
  name: string;
  tool: string;
  /** The call's arguments (unique per call: the gateway caches search answers). */
  args(session: ClientSession): Promise<Record<string, unknown>> | Record<string, unknown>;
  /** What every rendering must carry, given the arguments. */
  facts(args: Record<string, unknown>): Fact[];
  /** A piece of a page or answer: in every rendering exactly once. */
  once?(args: Record<string, unknown>): string;
  /** What no rendering may say. */
  never?: RegExp[];
}

const query = (args: Record<string, unknown>) => String(args.query);
const fetchUrl = (label: string) => `https://docs.example.org/${unique(label)}/long-page`;

/** A finished job, made through `session`: the job_id a video_status scenario follows. */
async function doneJob(session: ClientSession, prompt = ''): Promise<string> {
  const result = (await session.client.callTool({
    name: 'video_generate',
    arguments: { prompt: `${unique('view')} polls-0 ${prompt}`, wait_seconds: 20 },
  })) as CallToolResult;
  const text = JSON.stringify(result);
  const id = /vj_[A-Za-z0-9_-]+/.exec(text)?.[0];
  if (!id) throw new Error(`no job_id in ${text}`);
  return id;
}

function spokenFile(words: number): string {
  const name = `${unique('talk')}.mp3`;
  const spoken = Array.from({ length: words }, (_, i) => `w${String(i + 1).padStart(4, '0')}`).join(' ');
  writeFileSync(join(cwd, name), `ID3\x04\x00\x00\x00\x00\x00\x00SPOKEN: ${spoken}\n`, 'latin1');
  return name;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'web_search: results',
    tool: 'web_search',
    args: () => ({ query: unique('view'), provider: 'tavily', max_results: 3 }),
    facts: (a) => [
      `Result 1 for ${query(a)}`,
      `Snippet 3 about ${query(a)}`,
      /https:\/\/example\.com\/[^\s"]+\/3/,
      '2026-01-15',
    ],
    once: (a) => `Snippet 2 about ${query(a)}`,
  },
  {
    name: 'web_search: no results',
    tool: 'web_search',
    args: () => ({ query: `${unique('view')} no-results`, provider: 'tavily' }),
    facts: () => [/No results|"results":\[\]/],
  },
  {
    name: 'web_fetch: the first part of a long page',
    tool: 'web_fetch',
    args: () => ({ url: fetchUrl('paged'), provider: 'exa', max_length: 2000 }),
    facts: (a) => [`Line 00001 of ${a.url}`, /call this tool again with start_index=\d{4}/],
    once: (a) => `Line 00002 of ${a.url}`,
    never: [/\bweb_fetch\b/],
  },
  {
    name: 'web_fetch: the last part',
    tool: 'web_fetch',
    args: () => ({ url: fetchUrl('last'), provider: 'exa', start_index: 70_000, max_length: 100_000 }),
    facts: (a) => [`Line 01200 of ${a.url}`],
    once: (a) => `Line 01199 of ${a.url}`,
    never: [/call this tool again/],
  },
  {
    name: 'web_fetch: an answer about the page',
    tool: 'web_fetch',
    args: () => ({ url: fetchUrl('asked'), provider: 'exa', prompt: 'What is on it?' }),
    facts: () => ['Echo: Question: What is on it?', 'openai/gpt-5.4-mini'],
    once: () => 'Echo: Question: What is on it?',
    never: [/\bweb_fetch\b/],
  },
  {
    name: 'video_generate: a running job',
    tool: 'video_generate',
    args: () => ({ prompt: `${unique('view')} polls-9`, wait_seconds: 0 }),
    facts: () => [/vj_[A-Za-z0-9_-]+/, /running/, /call video_status with this job_id/, /bills/],
  },
  {
    name: 'video_status: a done job',
    tool: 'video_status',
    args: async (s) => ({ job_id: await doneJob(s), wait_seconds: 0 }),
    facts: (a) => [String(a.job_id), /done/, /https?:\/\/[^\s"]+\/files\/[^\s"]+\.mp4/, /download: true/],
  },
  {
    name: 'video_status: a saved file',
    tool: 'video_status',
    args: async (s) => ({ job_id: await doneJob(s), wait_seconds: 0, download: true }),
    facts: (a) => [String(a.job_id), /gateway-output\/video-[^\s"]+\.mp4/],
  },
  {
    name: 'video_status: a failed job',
    tool: 'video_status',
    args: async (s) => ({ job_id: await doneJob(s, 'video-fails'), wait_seconds: 0 }),
    facts: () => [/FAILED|"status":"failed"/, /moderation/, /video_generate/, /billed again/],
  },
  {
    name: 'audio_speech: a saved file',
    tool: 'audio_speech',
    args: () => ({ text: unique('say'), model: 'openai/tts-1', voice: 'alloy' }),
    facts: () => [/gateway-output\/speech-alloy-[^\s"]+\.mp3/, 'openai/tts-1/alloy'],
  },
  {
    name: 'audio_transcribe: a long transcript, in parts and saved',
    tool: 'audio_transcribe',
    args: () => ({ file_path: spokenFile(400), model: 'openai/whisper-1', max_length: 600 }),
    facts: () => [
      'w0001',
      /call this tool again with the same arguments and start_index=\d+/,
      /-transcript-[^\s"]+\.txt/,
    ],
    once: () => 'w0002',
    never: [/\baudio_transcribe\b/],
  },
  {
    name: 'list_models: speech',
    tool: 'list_models',
    args: () => ({ capability: 'speech' }),
    facts: () => ['openai/tts-1', 'selfhosted-tts/kokoro', /Voices: /],
  },
  {
    name: 'ask_model: an answer',
    tool: 'ask_model',
    args: () => ({ prompt: unique('hello'), model: 'openai/gpt-5.4-mini' }),
    facts: (a) => [`Echo: ${a.prompt}`, 'openai/gpt-5.4-mini'],
    once: (a) => `Echo: ${a.prompt}`,
  },
  {
    name: 'an error',
    tool: 'web_search',
    args: () => ({ query: `${unique('view')} fault-500`, provider: 'tavily' }),
    facts: () => [/Web search failed/, /500/],
  },
];

/** The session each client (and one the server does not know) is connected with. */
const sessions = new Map<string, ClientSession>();
const UNKNOWN = { name: 'some-agent', version: '1.0.0' };
beforeAll(async () => {
  for (const client of MODEL_VIEW_CLIENTS) {
    sessions.set(client.name, await connectAs(client.info, { ...gw.env, CWD: cwd }));
  }
  sessions.set(UNKNOWN.name, await connectAs(UNKNOWN, { ...gw.env, CWD: cwd }));
});
afterAll(async () => {
  for (const session of sessions.values()) await session.close();
});

function expectView(view: string, scenario: Scenario, args: Record<string, unknown>, who: string): void {
  for (const fact of scenario.facts(args)) {
    if (typeof fact === 'string') expect(view, `${who} lacks "${fact}":\n${view}`).toContain(fact);
    else expect(view, `${who} lacks ${fact}:\n${view}`).toMatch(fact);
  }
  if (scenario.once) {
    const piece = scenario.once(args);
    expect(occurrences(view, piece), `${who} holds "${piece}" ${occurrences(view, piece)} times`).toBe(1);
  }
  for (const bad of scenario.never ?? []) expect(view, `${who} says ${bad}`).not.toMatch(bad);
}

async function call(session: ClientSession, scenario: Scenario) {
  const args = await scenario.args(session);
  const result = (await session.client.callTool({ name: scenario.tool, arguments: args }, undefined, {
    timeout: 60_000,
  })) as CallToolResult;
  return { args, result, listed: session.tools.get(scenario.tool) ?? {} };
}

describe.each(SCENARIOS)('$name', (scenario) => {
  it.each(MODEL_VIEW_CLIENTS.map((c) => [c.name, c] as [string, ModelViewClient]))(
    'reaches the model of %s whole, once',
    async (_name, client) => {
      const session = sessions.get(client.name);
      if (!session) throw new Error('not connected');
      const { args, result, listed } = await call(session, scenario);
      expectView(client.render(result, listed), scenario, args, client.name);
    },
  );

  it('to a client the server does not know: the structured content alone and the text alone each carry it', async () => {
    const session = sessions.get(UNKNOWN.name);
    if (!session) throw new Error('not connected');
    const { args, result, listed } = await call(session, scenario);
    // Claude Code reads only the structured content, Gemini CLI only the text.
    expectView(modelViewClient('Claude Code').render(result, listed), scenario, args, 'structured content');
    expectView(modelViewClient('Gemini CLI').render(result, listed), scenario, args, 'text');
    if (!result.isError) expect(structuredOf(result)).toBeDefined();
  });
});

describe('GATEWAY_RESULT_FORMAT=text, the built server over stdio', () => {
  it('lists no output schemas and answers in text alone, which the SDK client accepts', async () => {
    const server = await connectStdio({ ...gw.env, GATEWAY_RESULT_FORMAT: 'text', CWD: cwd });
    try {
      const { tools } = await server.client.listTools();
      expect(tools).toHaveLength(11);
      expect(tools.filter((t) => t.outputSchema)).toEqual([]);
      const url = fetchUrl('text');
      const result = (await server.client.callTool({
        name: 'web_fetch',
        arguments: { url, provider: 'exa', max_length: 2000 },
      })) as CallToolResult;
      expect(result.structuredContent).toBeUndefined();
      expect(textOf(result)).toContain(`Line 00001 of ${url}`);
      expect(textOf(result)).toMatch(
        /\[\d[\d,]* more characters, about [\d,]+ tokens \(an estimate\): call this tool again with start_index=\d+/,
      );
      const speech = (await server.client.callTool({
        name: 'audio_speech',
        arguments: { text: unique('say'), model: 'openai/tts-1/alloy' },
      })) as CallToolResult;
      expect(speech.content.map((c) => c.type)).toEqual(['text']);
      expect(textOf(speech)).toMatch(/^Saved speech to \/\S+\.mp3 /);
    } finally {
      await server.close();
    }
  });
});
