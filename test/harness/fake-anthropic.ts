import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A scripted stand-in for Anthropic's Messages API on loopback, for running a real coding agent
// (Claude Code, pointed at it with ANTHROPIC_BASE_URL) end to end without a model. The model's
// script, for a conversation offered a tool named `…web_search`:
//   1. If the tool is only listed by name as deferred (Claude Code lists MCP tools in the system
//      prompt and loads their schemas on demand), call ToolSearch with `select:<name>`.
//   2. Once its schema is loaded (ToolSearch answered, or it is among the tools), call it with
//      `{query}`.
//   3. Once its tool_result is in the conversation, record it, say a short sentence and stop.
// Any other request (titles, summaries, token counts) gets a minimal valid answer. Streamed
// answers use the Messages API's server-sent events.

/** One request the fake model was sent. */
export interface ModelRequest {
  method: string;
  path: string;
  /** The names of the tools offered, in order. */
  tools: string[];
  stream: boolean;
}

export interface FakeAnthropic {
  url: string;
  requests: ModelRequest[];
  /** Paths the fake does not serve (answered 404), as `METHOD /path`. */
  unexpected: string[];
  /** The name of each tool the model called, in order. */
  toolCalls: string[];
  /** Each tool_result block of the search tool that the model received, exactly as sent. */
  toolResults: ContentBlock[];
  close(): Promise<void>;
}

/** A block of a message's content, e.g. `{type: 'tool_result', tool_use_id, content}`. */
export interface ContentBlock {
  type: string;
  [key: string]: unknown;
}

interface MessagesBody {
  model?: string;
  stream?: boolean;
  system?: unknown;
  tools?: { name?: string; defer_loading?: boolean }[];
  messages?: { role: string; content: string | ContentBlock[] }[];
}

export const FINAL_TEXT = 'The search tool answered.';

export async function startFakeAnthropic(
  query: string,
  call?: { tool: string; args: Record<string, unknown> },
): Promise<FakeAnthropic> {
  const fake: Omit<FakeAnthropic, 'url' | 'close'> = {
    requests: [],
    unexpected: [],
    toolCalls: [],
    toolResults: [],
  };
  let ids = 0;

  const answer = (body: MessagesBody): { content: ContentBlock[]; stop: string } => {
    const blocks = (body.messages ?? []).flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
    const called = new Map(blocks.filter((b) => b.type === 'tool_use').map((b) => [b.id, b.name as string]));
    const results = blocks.filter((b) => b.type === 'tool_result');
    const resultOf = (name: string | undefined) =>
      results.find((r) => name && called.get(r.tool_use_id) === name);
    const offered = (body.tools ?? []).map((t) => t.name ?? '');
    const tool = call?.tool ?? 'web_search';
    const search =
      offered.find((name) => name.startsWith('mcp__') && name.endsWith(tool)) ??
      JSON.stringify([body.system, body.messages]).match(new RegExp(`mcp__[\\w-]+__${tool}`))?.[0];
    const callTool = (name: string, input: Record<string, unknown>) => {
      fake.toolCalls.push(name);
      return { content: [{ type: 'tool_use', id: `toolu_fake${++ids}`, name, input }], stop: 'tool_use' };
    };
    const searched = resultOf(search);
    if (searched) {
      if (!fake.toolResults.some((seen) => seen.tool_use_id === searched.tool_use_id))
        fake.toolResults.push(searched);
      return { content: [{ type: 'text', text: FINAL_TEXT }], stop: 'end_turn' };
    }
    const loaded = resultOf('ToolSearch') || body.tools?.some((t) => t.name === search && !t.defer_loading);
    if (search && loaded) return callTool(search, call?.args ?? { query });
    if (search && offered.includes('ToolSearch'))
      return callTool('ToolSearch', { query: `select:${search}` });
    return { content: [{ type: 'text', text: 'OK' }], stop: 'end_turn' };
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'));
      } catch (error) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: String(error) } }));
      }
    });
  });

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const body = (raw ? JSON.parse(raw) : {}) as MessagesBody;
    fake.requests.push({
      method: req.method ?? '',
      path,
      tools: (body.tools ?? []).map((t) => t.name ?? ''),
      stream: body.stream === true,
    });
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      return json(res, 200, { input_tokens: 10 });
    }
    if (req.method !== 'POST' || path !== '/v1/messages') {
      fake.unexpected.push(`${req.method} ${path}`);
      return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'Not found' } });
    }
    const { content, stop } = answer(body);
    const message = {
      id: `msg_fake${++ids}`,
      type: 'message',
      role: 'assistant',
      model: body.model ?? 'claude-fake',
      stop_sequence: null,
      usage: {
        input_tokens: 10,
        output_tokens: 5,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    };
    if (!body.stream) return json(res, 200, { ...message, content, stop_reason: stop });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (type: string, data: Record<string, unknown>) =>
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event('message_start', {
      message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
    });
    content.forEach((block, index) => {
      if (block.type === 'text') {
        event('content_block_start', { index, content_block: { type: 'text', text: '' } });
        event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
      } else {
        event('content_block_start', { index, content_block: { ...block, input: {} } });
        event('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        });
      }
      event('content_block_stop', { index });
    });
    event('message_delta', {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: 5 },
    });
    event('message_stop', {});
    res.end();
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...fake,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
