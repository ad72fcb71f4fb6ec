import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { type ClientSession, connectAs } from '../test/harness/client-session.js';
import { tempDir } from '../test/harness/harness.js';
import { MODEL_VIEW_CLIENTS } from '../test/harness/model-view.js';
import type { BenchService } from './lib.js';

/**
 * Tokens each client's model receives from one result of every tool, against the result's
 * information floor: the values of its structured content (every fact and the next step) with
 * no keys, quotes or markup, one per line. Tokens are counted with o200k_base (gpt-tokenizer: the
 * encoding of the GPT-4o/GPT-5 family); other tokenizers count differently, the ratios little.
 * Each client gets what the server sends it (by its clientInfo, src/mcp/result-view.ts) and the result
 * is rendered as that client hands it to its model (test/harness/model-view.ts).
 */
export interface ModelViewRow {
  call: string;
  floor: number;
  /** Tokens per client, in MODEL_VIEW_CLIENTS order. */
  tokens: number[];
  /**
   * Tokens of the structured content alone, as JSON: what Claude Code's and Codex's models get
   * when a result carries structured content (a client the server does not know).
   */
  structuredJson: number;
}

interface BenchCall {
  call: string;
  tool: string;
  args: (cwd: string, jobId: string) => Record<string, unknown>;
}

const CALLS: BenchCall[] = [
  {
    call: 'web_search, 10 results',
    tool: 'web_search',
    args: () => ({ query: 'context windows', max_results: 10 }),
  },
  {
    call: 'web_fetch, first 16,000 characters',
    tool: 'web_fetch',
    args: () => ({ url: 'https://example.com/long/doc' }),
  },
  {
    call: 'web_fetch with a prompt',
    tool: 'web_fetch',
    args: () => ({ url: 'https://example.com/docs', prompt: 'What is this page about?' }),
  },
  {
    call: 'video_generate, running',
    tool: 'video_generate',
    args: () => ({ prompt: 'a red kite', wait_seconds: 0 }),
  },
  {
    call: 'video_status, done',
    tool: 'video_status',
    args: (_c, job) => ({ job_id: job, wait_seconds: 20 }),
  },
  {
    call: 'video_status, saved',
    tool: 'video_status',
    args: (_c, job) => ({ job_id: job, wait_seconds: 0, download: true }),
  },
  {
    call: 'audio_speech',
    tool: 'audio_speech',
    args: () => ({ text: 'Hello there.', model: 'openai/tts-1/alloy' }),
  },
  {
    call: 'audio_transcribe',
    tool: 'audio_transcribe',
    args: (cwd) => ({ file_path: join(cwd, 'talk.mp3'), model: 'groq/whisper-large-v3' }),
  },
  { call: 'list_models', tool: 'list_models', args: () => ({}) },
  { call: 'ask_model', tool: 'ask_model', args: () => ({ prompt: 'Say hello in one sentence.' }) },
  { call: 'an error', tool: 'video_status', args: () => ({ job_id: 'vj_not-a-handle' }) },
];

export async function benchModelView(service: BenchService): Promise<ModelViewRow[]> {
  const cwd = tempDir('gtm-bench-view-');
  writeFileSync(join(cwd, 'talk.mp3'), Buffer.concat([Buffer.from('ID3'), Buffer.alloc(4096, 7)]));
  const env = { GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: service.apiKey, CWD: cwd };
  const unknown = await connectAs({ name: 'some-agent', version: '1.0.0' }, env);
  const sessions: ClientSession[] = [];
  for (const client of MODEL_VIEW_CLIENTS) sessions.push(await connectAs(client.info, env));
  try {
    const rows: ModelViewRow[] = [];
    for (const spec of CALLS) {
      const both = await callOn(unknown, spec, cwd);
      const tokens: number[] = [];
      for (const [i, client] of MODEL_VIEW_CLIENTS.entries()) {
        const session = sessions[i] as ClientSession;
        const result = await callOn(session, spec, cwd);
        tokens.push(countTokens(client.render(result, session.tools.get(spec.tool) ?? {})));
      }
      rows.push({
        call: spec.call,
        floor: countTokens(floorOf(both)),
        tokens,
        structuredJson: countTokens(
          both.structuredContent === undefined ? floorOf(both) : JSON.stringify(both.structuredContent),
        ),
      });
    }
    return rows;
  } finally {
    for (const session of [unknown, ...sessions]) await session.close();
  }
}

/** A running job's handle per session, made once (video_status follows it to done). */
const jobs = new WeakMap<ClientSession, string>();

async function callOn(session: ClientSession, spec: BenchCall, cwd: string): Promise<CallToolResult> {
  let job = jobs.get(session);
  if (!job && spec.tool === 'video_status' && spec.call !== 'an error') {
    const started = await session.client.callTool({
      name: 'video_generate',
      arguments: { prompt: 'a red kite', wait_seconds: 0 },
    });
    job = /vj_[A-Za-z0-9_-]+/.exec(JSON.stringify(started))?.[0] ?? '';
    jobs.set(session, job);
  }
  return (await session.client.callTool(
    { name: spec.tool, arguments: spec.args(cwd, job ?? '') },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult;
}

/**
 * The information floor: every value of the structured content (an error: its text), one per
 * line, without keys, quotes, escapes or markup.
 */
export function floorOf(result: CallToolResult): string {
  if (result.isError || result.structuredContent === undefined) {
    return result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  }
  const values: string[] = [];
  const walk = (node: unknown) => {
    if (typeof node === 'string') {
      if (node) values.push(node);
    } else if (typeof node === 'number' || node === true) values.push(String(node));
    else if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') Object.values(node).forEach(walk);
  };
  walk(result.structuredContent);
  return values.join('\n');
}
