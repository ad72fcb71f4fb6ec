// A scripted OpenAI Responses API on 127.0.0.1 for running OpenAI Codex CLI without a real model:
// POST /v1/responses answered with the SSE events Codex reads (response.created,
// response.output_item.added/done, response.completed). While the request offers a tool named
// web_search (a function, or one inside a namespace such as Codex's `mcp__gateway`; or the tool
// `call` names) and the conversation holds no tool output yet, the model calls it with {"query"}
// (or `call`'s arguments), a namespaced one before any other; once a
// function_call_output is in the input, the fake records it (what the model received from the
// tool) and answers with a short final text. Any other path is answered 404 and logged.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeModelApi, readBody } from './real-client.js';

export interface ToolCallMade {
  namespace?: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** The base URL (ends in /v1) is the one to give the client. */
export interface FakeOpenAI extends FakeModelApi {
  /** The tool calls the model made. */
  calls: ToolCallMade[];
  /** The tool outputs the client sent back, exactly as sent (a string or content items). */
  toolOutputs: unknown[];
  /** The tool names offered in the first request that offered tools, namespaced as `ns/name`. */
  offeredTools: string[];
}

export const FINAL_TEXT = 'Search done.';

interface ResponsesTool {
  type?: string;
  name?: string;
  tools?: ResponsesTool[];
}

interface InputItem {
  type?: string;
  call_id?: string;
  output?: unknown;
}

/** Every function tool offered, with the namespace it sits in. */
function functionTools(tools: ResponsesTool[] = []): { namespace?: string; name: string }[] {
  return tools.flatMap((tool) => {
    if (tool.type === 'namespace' && tool.name) {
      return (tool.tools ?? []).flatMap((t) => (t.name ? [{ namespace: tool.name, name: t.name }] : []));
    }
    return tool.type === 'function' && tool.name ? [{ name: tool.name }] : [];
  });
}

function sse(res: ServerResponse, events: Record<string, unknown>[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

function responseEvents(id: string, item: Record<string, unknown>): Record<string, unknown>[] {
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  return [
    { type: 'response.created', response: { id, status: 'in_progress' } },
    { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } },
    { type: 'response.output_item.done', output_index: 0, item: { ...item, status: 'completed' } },
    { type: 'response.completed', response: { id, status: 'completed', usage } },
  ];
}

export async function startFakeOpenAI(options: {
  query: string;
  call?: { tool: string; args: Record<string, unknown> };
}): Promise<FakeOpenAI> {
  const fake = {
    requests: [],
    unexpected: [],
    calls: [],
    toolOutputs: [],
    offeredTools: [],
  } as unknown as FakeOpenAI;
  let counter = 0;
  const seenOutputs = new Set<string>();

  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = req.url ?? '';
    fake.requests.push({ method: req.method ?? '', path, body });
    if (req.method !== 'POST' || path.split('?')[0] !== '/v1/responses') {
      fake.unexpected.push(`${req.method} ${path}`);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${path}`, type: 'invalid_request_error' } }));
      return;
    }
    const request = body as { tools?: ResponsesTool[]; input?: InputItem[] };
    const id = `resp_${++counter}`;
    const tools = functionTools(request.tools);
    if (tools.length > 0 && fake.offeredTools.length === 0) {
      fake.offeredTools.push(...tools.map((t) => (t.namespace ? `${t.namespace}/${t.name}` : t.name)));
    }
    const outputs = (request.input ?? []).filter((item) => item.type === 'function_call_output');
    const wanted = tools.filter((t) => t.name.includes(options.call?.tool ?? 'web_search'));
    const search = wanted.find((t) => t.namespace) ?? wanted[0];
    if (outputs.length > 0) {
      for (const output of outputs) {
        if (seenOutputs.has(output.call_id ?? '')) continue;
        seenOutputs.add(output.call_id ?? '');
        fake.toolOutputs.push(output.output);
      }
      const text = { type: 'message', role: 'assistant', id: `msg_${counter}` };
      sse(res, responseEvents(id, { ...text, content: [{ type: 'output_text', text: FINAL_TEXT }] }));
    } else if (search) {
      const args = options.call?.args ?? { query: options.query };
      fake.calls.push({ ...search, arguments: args });
      const call = {
        type: 'function_call',
        id: `fc_${counter}`,
        call_id: `call_${counter}`,
        name: search.name,
        ...(search.namespace ? { namespace: search.namespace } : {}),
        arguments: JSON.stringify(args),
      };
      sse(res, responseEvents(id, call));
    } else {
      const text = { type: 'message', role: 'assistant', id: `msg_${counter}` };
      sse(res, responseEvents(id, { ...text, content: [{ type: 'output_text', text: 'OK.' }] }));
    }
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
