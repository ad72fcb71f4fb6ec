import { readFileSync } from 'node:fs';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../harness/gateway.js';
import { connectStdio, spawnServer, textOf } from '../harness/harness.js';

// Secrets: the gateway key, the MCP token and a password in the base URL. They must never reach
// tool output, logs or process listings, even when the gateway itself echoes them back.

const SECRET = 'sk-live-echoed-secret-0123456789';
const TOKEN = 'mcp-token-echoed-0123456789';

const gw = useGateway({ apiKey: SECRET, env: { GATEWAY_MCP_TOKEN: TOKEN } });

const call = (name: string, args: Record<string, unknown>) =>
  gw.conn.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/** Everything a client receives from a result, as one string. */
const wire = (result: CallToolResult) => JSON.stringify(result);

describe('a gateway that echoes secrets in successful answers', () => {
  it('search: the key and the token never reach the agent', async () => {
    gw.service.inject('search', {
      body: JSON.stringify({
        provider: 'tavily',
        query: 'q',
        results: [
          {
            title: `Leaked ${SECRET}`,
            url: `https://example.com/?key=${SECRET}`,
            snippet: `token ${TOKEN} and key ${SECRET}`,
          },
        ],
        answer: `the key is ${SECRET}`,
      }),
    });
    const result = await call('web_search', { query: 'q', provider: 'tavily' });
    expect(result.isError).toBeFalsy();
    expect(wire(result)).not.toContain(SECRET);
    expect(wire(result)).not.toContain(TOKEN);
    expect(textOf(result)).toContain('Leaked ***');
  });

  it('fetch: the key is removed from the page, other bearer-looking text is left intact', async () => {
    const example = 'Authorization: Bearer abcdefghijklmnop';
    gw.service.inject('fetch', {
      body: JSON.stringify({
        provider: 'jina-reader',
        url: 'https://example.com/docs',
        title: `Docs ${SECRET}`,
        content: { format: 'markdown', text: `Use ${example}. Your key: ${SECRET}.` },
      }),
    });
    const result = await call('web_fetch', { url: 'https://example.com/docs', provider: 'jina-reader' });
    expect(result.isError).toBeFalsy();
    expect(wire(result)).not.toContain(SECRET);
    expect(textOf(result)).toContain(`Use ${example}. Your key: ***.`);
  });

  it('video: a video URL carrying the key is shown without it, in text, structure and links', async () => {
    const submitted = await call('video_generate', { prompt: 'p', wait_seconds: 0 });
    const jobId = (submitted.structuredContent as { job_id: string }).job_id;
    gw.service.inject('videos.poll', {
      body: JSON.stringify({
        status: 'done',
        video: { url: `https://cdn.example.com/v.mp4?api_key=${SECRET}`, duration: 8 },
      }),
    });
    const result = await call('video_status', { job_id: jobId, wait_seconds: 0 });
    expect(result.isError).toBeFalsy();
    expect(wire(result)).not.toContain(SECRET);
    expect((result.structuredContent as { video_url: string }).video_url).toBe(
      'https://cdn.example.com/v.mp4?api_key=***',
    );
  });

  it('errors: a refusal that quotes the key is scrubbed too', async () => {
    gw.service.inject('responses', { status: 400, message: `bad key ${SECRET} for token ${TOKEN}` });
    const result = await call('ask_model', { prompt: 'hi', model: 'openai/gpt-4o-mini' });
    expect(result.isError).toBe(true);
    expect(wire(result)).not.toContain(SECRET);
    expect(wire(result)).not.toContain(TOKEN);
  });
});

/** True when any 10 characters of the key in a row are in the text: a secret cut in part still leaks. */
const holdsPartOfKey = (text: string) =>
  Array.from({ length: SECRET.length - 9 }, (_, i) => SECRET.slice(i, i + 10)).some((part) =>
    text.includes(part),
  );

describe('a gateway that puts the key where the server cuts its text', () => {
  // Each case places the key across a cut the server makes (a message, a field, a preview, a
  // page): the key must be gone before the cut, or part of it is left where no scrub finds it.
  const filler = (n: number) => 'x'.repeat(n);

  it('an error message longer than the server quotes', async () => {
    gw.service.inject('search', { status: 400, message: `${filler(285)} ${SECRET} and more` });
    const result = await call('web_search', { query: 'q', provider: 'tavily' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('xxx');
    expect(holdsPartOfKey(wire(result))).toBe(false);
  });

  it('a body that is not JSON, quoted in part', async () => {
    gw.service.inject('fetch', { body: `<p>${filler(60)} ${SECRET} and the rest of the page` });
    const result = await call('web_fetch', { url: 'https://example.com/', provider: 'jina-reader' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('not valid JSON');
    expect(holdsPartOfKey(wire(result))).toBe(false);
  });

  it('a search title longer than a result keeps', async () => {
    gw.service.inject('search', {
      body: JSON.stringify({
        provider: 'tavily',
        query: 'q',
        results: [{ title: `${filler(290)}${SECRET}`, url: 'https://example.com/', snippet: 's' }],
      }),
    });
    const result = await call('web_search', { query: 'q', provider: 'tavily' });
    expect(result.isError).toBeFalsy();
    expect(holdsPartOfKey(wire(result))).toBe(false);
  });

  it('a page read in parts, with the key across the end of a part', async () => {
    gw.service.inject('fetch', {
      body: JSON.stringify({
        provider: 'jina-reader',
        url: 'https://example.com/long',
        title: 'Long',
        content: { format: 'markdown', text: `${filler(190)}${SECRET}${filler(400)}` },
      }),
    });
    const args = { url: 'https://example.com/long', provider: 'jina-reader', max_length: 200 };
    const first = await call('web_fetch', args);
    const second = await call('web_fetch', { ...args, start_index: 200 });
    expect(first.isError).toBeFalsy();
    expect(second.isError).toBeFalsy();
    expect(holdsPartOfKey(wire(first) + wire(second))).toBe(false);
  });

  it('a failed video job whose reason is longer than the server quotes', async () => {
    const submitted = await call('video_generate', { prompt: 'p', wait_seconds: 0 });
    const jobId = (submitted.structuredContent as { job_id: string }).job_id;
    gw.service.inject('videos.poll', {
      body: JSON.stringify({ status: 'failed', error: { message: `${filler(380)} ${SECRET}` } }),
    });
    const result = await call('video_status', { job_id: jobId, wait_seconds: 0 });
    expect(textOf(result)).toContain('xxx');
    expect(holdsPartOfKey(wire(result))).toBe(false);
  });
});

describe('logs and process listings', () => {
  it('debug logs of a session full of failures never contain the key', async () => {
    const spawned = await connectStdio({
      GATEWAY_BASE_URL: gw.service.url,
      GATEWAY_API_KEY: SECRET,
      GATEWAY_LOG_LEVEL: 'debug',
    });
    try {
      gw.service.inject('search', { status: 401, message: `invalid key ${SECRET}`, times: 3 });
      gw.service.inject('fetch', { reset: true, times: 3 });
      await spawned.client.callTool({ name: 'web_search', arguments: { query: 'x', provider: 'tavily' } });
      await spawned.client.callTool({
        name: 'web_fetch',
        arguments: { url: 'https://example.com/', provider: 'jina-reader' },
      });
      await spawned.client.callTool({ name: 'video_status', arguments: { job_id: 'vj_garbage' } });
      expect(spawned.stderr()).toContain('ready on stdio');
      expect(spawned.stderr()).not.toContain(SECRET);
    } finally {
      await spawned.close();
    }
  });

  it.runIf(process.platform === 'linux')(
    'the key from GATEWAY_API_KEY stays out of the command line; --api-key is warned about',
    async () => {
      const viaEnv = spawnServer({ GATEWAY_BASE_URL: gw.service.url, GATEWAY_API_KEY: SECRET });
      const viaFlag = spawnServer({ GATEWAY_BASE_URL: gw.service.url }, ['--api-key', SECRET]);
      try {
        await viaEnv.waitForStderr('ready on stdio');
        await viaFlag.waitForStderr('ready on stdio');
        // What `ps` shows any local user: /proc/<pid>/cmdline is world-readable, environ is not.
        const cmdline = (pid: number | undefined) => readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        expect(cmdline(viaEnv.child.pid)).not.toContain(SECRET);
        expect(cmdline(viaFlag.child.pid)).toContain(SECRET);
        expect(viaFlag.stderr()).toMatch(
          /--api-key is visible to every user.*set GATEWAY_API_KEY or GATEWAY_API_KEY_FILE/,
        );
        expect(viaEnv.stderr()).not.toMatch(/visible to every user/);
        expect(viaFlag.stderr() + viaEnv.stderr()).not.toContain(SECRET);
      } finally {
        viaEnv.child.stdin.end();
        viaFlag.child.stdin.end();
        await Promise.all([viaEnv.exited, viaFlag.exited]);
      }
    },
  );

  it('a password in GATEWAY_BASE_URL is never logged nor shown in results', async () => {
    const password = 'base-url-password-42';
    const port = new URL(gw.service.url).port;
    const spawned = await connectStdio({
      // Nothing listens on port 9: every call fails with a message naming the base URL.
      GATEWAY_BASE_URL: `http://user:${password}@127.0.0.1:9`,
      GATEWAY_API_KEY: SECRET,
      GATEWAY_LOG_LEVEL: 'debug',
      GATEWAY_MAX_RETRIES: '0',
    });
    try {
      const result = (await spawned.client.callTool({
        name: 'web_search',
        arguments: { query: 'x', provider: 'tavily' },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/Cannot reach the service at http:\/\/user:\*\*\*@127\.0\.0\.1:9/);
      expect(wire(result)).not.toContain(password);
      expect(spawned.stderr()).toContain('ready on stdio');
      expect(spawned.stderr()).not.toContain(password);
      expect(port).not.toBe('9');
    } finally {
      await spawned.close();
    }
  });
});
