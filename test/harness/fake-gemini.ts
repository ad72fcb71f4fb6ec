// A scripted Gemini API on 127.0.0.1 for running Gemini CLI without a real model:
// POST /v1beta/models/<model>:streamGenerateContent?alt=sse answered with `data: <chunk>` SSE
// lines, :generateContent with one JSON response, :countTokens with a count. While the request
// declares a function whose name contains web_search (the MCP one, `mcp_gateway_web_search`,
// ahead of Gemini CLI's own `google_web_search`) and no functionResponse is in the contents yet,
// the model calls it with {"query"}; once a functionResponse is there, the fake records it (what
// the model received from the tool) and answers with a short final text. Any other path is
// answered 404 and logged.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FakeModelApi, readBody } from './real-client.js';

export interface FunctionResponsePart {
  id?: string;
  name: string;
  response: Record<string, unknown>;
}

/** The base URL is the one to give the client as GOOGLE_GEMINI_BASE_URL. */
export interface FakeGemini extends FakeModelApi {
  /** The function calls the model made. */
  calls: { name: string; args: Record<string, unknown> }[];
  /** The functionResponse parts the client sent back, exactly as sent. */
  functionResponses: FunctionResponsePart[];
  /** The function names declared in the first request that declared any. */
  offeredTools: string[];
}

export const FINAL_TEXT = 'Search done.';

interface GenerateRequest {
  contents?: { role?: string; parts?: { functionResponse?: FunctionResponsePart }[] }[];
  tools?: { functionDeclarations?: { name: string }[] }[];
}

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

function candidate(parts: Record<string, unknown>[]): Record<string, unknown> {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: USAGE,
  };
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The function to call (web_search unless told): an MCP server's before any built-in one. */
function searchTool(names: string[], tool = 'web_search'): string | undefined {
  const found = names.filter((name) => name.includes(tool));
  return found.find((name) => name.startsWith('mcp_')) ?? found[0];
}

export async function startFakeGemini(options: {
  query: string;
  call?: { tool: string; args: Record<string, unknown> };
}): Promise<FakeGemini> {
  const fake = {
    requests: [],
    unexpected: [],
    calls: [],
    functionResponses: [],
    offeredTools: [],
  } as unknown as FakeGemini;

  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const path = req.url ?? '';
    fake.requests.push({ method: req.method ?? '', path, body });
    const action = /^\/v1beta\/models\/[^/:]+:(\w+)/.exec(path.split('?')[0] ?? '')?.[1];
    if (req.method !== 'POST' || !action) {
      fake.unexpected.push(`${req.method} ${path}`);
      json(res, 404, { error: { code: 404, message: `no route ${path}`, status: 'NOT_FOUND' } });
      return;
    }
    if (action === 'countTokens') {
      json(res, 200, { totalTokens: 10 });
      return;
    }
    if (action !== 'streamGenerateContent' && action !== 'generateContent') {
      fake.unexpected.push(`${req.method} ${path}`);
      json(res, 404, { error: { code: 404, message: `no action ${action}`, status: 'NOT_FOUND' } });
      return;
    }
    const request = body as GenerateRequest;
    const names = (request.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));
    if (names.length > 0 && fake.offeredTools.length === 0) fake.offeredTools.push(...names);
    const responses = (request.contents ?? [])
      .flatMap((content) => content.parts ?? [])
      .flatMap((part) => (part.functionResponse ? [part.functionResponse] : []));
    const search = searchTool(names, options.call?.tool);
    let reply: Record<string, unknown>;
    if (responses.length > 0) {
      if (fake.functionResponses.length === 0) fake.functionResponses.push(...responses);
      reply = candidate([{ text: FINAL_TEXT }]);
    } else if (search) {
      const args = options.call?.args ?? { query: options.query };
      fake.calls.push({ name: search, args });
      reply = candidate([{ functionCall: { name: search, args } }]);
    } else {
      reply = candidate([{ text: 'OK.' }]);
    }
    if (action === 'generateContent') {
      json(res, 200, reply);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(`data: ${JSON.stringify(reply)}\n\n`);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
