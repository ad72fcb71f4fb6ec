// Views (MCP Apps) for the clients that declare the extension, and nothing new for the others:
// a client without `extensions["io.modelcontextprotocol/ui"]` gets the recorded tools/list
// (test/mcp/__snapshots__) and the same results, resources and reads as with views turned off.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getToolUiResourceUri } from '@modelcontextprotocol/ext-apps/app-bridge';
import {
  EXTENSION_ID,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY,
} from '@modelcontextprotocol/ext-apps/server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEGACY_VIEW_KEY, UI_EXTENSION, VIEW_MIME } from '../../src/views/ui-extension.js';
import { VIEW_DATA_KEY } from '../../src/views/view-data.js';
import { useReferenceService } from '../harness/gateway.js';
import { type Connected, connectInMemory, connectStdio, PROJECT_ROOT, tempDir } from '../harness/harness.js';

const SNAPSHOTS = join(PROJECT_ROOT, 'test/mcp/__snapshots__');
const VIDEO_VIEW = 'ui://gateway-tools/video.html';
const AUDIO_VIEW = 'ui://gateway-tools/audio.html';
/** The most a view's page may weigh: a host loads it into every conversation that shows it. */
const VIEW_MAX_BYTES = 150_000;

function client(name = 'test-client', mimeTypes: string[] | null = [VIEW_MIME]): Client {
  return new Client(
    { name, version: '1.0.0' },
    mimeTypes ? { capabilities: { extensions: { [UI_EXTENSION]: { mimeTypes } } } } : {},
  );
}

/** A result with its saved files' names (which hold the time) made comparable. */
function timeless(result: unknown): string {
  return JSON.stringify(result)
    .replace(/\d{8}-\d{6}(?:-\d{1,3})?/g, 'TIME')
    .replace(/"[^"]*gtm-views-[^"]*\/out/g, '"OUT');
}

describe('views (MCP Apps)', () => {
  const ref = useReferenceService();
  const open: Connected[] = [];
  const connect = async (argv: string[], c?: Client, env: Record<string, string> = {}) => {
    const outputDir = join(tempDir('gtm-views-'), 'out');
    const conn = await connectInMemory({ ...ref.env, GATEWAY_OUTPUT_DIR: outputDir, ...env }, argv, c);
    open.push(conn);
    return conn;
  };
  afterAll(async () => {
    for (const conn of open) await conn.close();
  });

  it('uses the names the extension package defines', () => {
    expect([UI_EXTENSION, VIEW_MIME, LEGACY_VIEW_KEY]).toEqual([
      EXTENSION_ID,
      RESOURCE_MIME_TYPE,
      RESOURCE_URI_META_KEY,
    ]);
  });

  describe('a client without the extension', () => {
    for (const format of ['structured', 'text'] as const) {
      it(`gets the recorded tools/list (${format})`, async () => {
        const conn = await connect(['--result-format', format]);
        const { tools } = await conn.client.listTools();
        expect(`${JSON.stringify(tools, null, 2)}\n`).toBe(
          readFileSync(join(SNAPSHOTS, `tools-${format}.json`), 'utf8'),
        );
      });
    }

    it('gets the same tool results, resources and reads as with views off', async () => {
      const seen: string[] = [];
      for (const views of ['on', 'off']) {
        const conn = await connect(['--result-format', 'structured'], client('test-client', null), {
          GATEWAY_VIEWS: views,
        });
        const speech = (await conn.client.callTool({
          name: 'audio_speech',
          arguments: { text: 'Hello', model: 'openai/tts-1/alloy', format: 'wav' },
        })) as CallToolResult;
        const video = (await conn.client.callTool({
          name: 'video_generate',
          arguments: { prompt: 'a cat', wait_seconds: 0 },
        })) as CallToolResult;
        const resources = await conn.client.listResources();
        const read = await conn.client
          .readResource({ uri: VIDEO_VIEW })
          .catch((error: Error) => error.message);
        expect(speech._meta).toBeUndefined();
        seen.push(
          [timeless(speech), timeless(video), timeless(resources), String(read)]
            .join('\n')
            .replace(/job_[A-Za-z0-9_-]+|vj[A-Za-z0-9_.-]{10,}/g, 'JOB'),
        );
      }
      expect(seen[0]).toBe(seen[1]);
      expect(seen[0]).toContain('Resource not found: ui://gateway-tools/video.html');
    });

    it('is told nothing of views when it declares the extension without the HTML profile', async () => {
      const conn = await connect(['--result-format', 'text'], client('test-client', ['text/plain']));
      const { tools } = await conn.client.listTools();
      expect(`${JSON.stringify(tools, null, 2)}\n`).toBe(
        readFileSync(join(SNAPSHOTS, 'tools-text.json'), 'utf8'),
      );
      expect((await conn.client.listResources()).resources).toEqual([]);
    });
  });

  describe('a client with the extension', () => {
    let conn: Connected;
    let tools: Tool[];
    beforeAll(async () => {
      conn = await connect(['--result-format', 'structured'], client());
      tools = (await conn.client.listTools()).tools;
    });

    it('is told the server has the extension', () => {
      const capabilities = conn.client.getServerCapabilities() as { extensions?: Record<string, unknown> };
      expect(capabilities.extensions).toEqual({ [UI_EXTENSION]: {} });
    });

    it('finds a view on each video tool and on audio_speech, under both keys, and the rest as recorded', () => {
      const recorded = JSON.parse(readFileSync(join(SNAPSHOTS, 'tools-structured.json'), 'utf8')) as Tool[];
      const views = Object.fromEntries(tools.map((tool) => [tool.name, uiUriOf(tool)]));
      expect(views).toMatchObject({
        video_generate: VIDEO_VIEW,
        video_edit: VIDEO_VIEW,
        video_extend: VIDEO_VIEW,
        video_status: VIDEO_VIEW,
        audio_speech: AUDIO_VIEW,
        video_follow: VIDEO_VIEW,
        web_search: undefined,
        audio_transcribe: undefined,
      });
      // The model's tools as recorded, each view's naming it; then the tool only the view calls.
      expect(tools.map((tool) => tool.name)).toEqual([
        ...recorded.map((entry) => entry.name),
        'video_follow',
      ]);
      for (const tool of tools.filter((t) => t.name !== 'video_follow')) {
        const before = recorded.find((entry) => entry.name === tool.name) as Tool;
        const { _meta, ...rest } = tool;
        const { _meta: recordedMeta, ...recordedRest } = before;
        expect(rest).toEqual(recordedRest);
        if (!views[tool.name]) expect(_meta).toEqual(recordedMeta);
        else expect(_meta?.[LEGACY_VIEW_KEY]).toBe(views[tool.name]);
      }
    });

    it("lets a view call its own video_follow, hidden from the model, and none of the model's tools", () => {
      const visibility = Object.fromEntries(
        tools
          .filter((tool) => uiUriOf(tool))
          .map((tool) => [tool.name, (tool._meta?.ui as { visibility?: string[] } | undefined)?.visibility]),
      );
      expect(visibility).toEqual({
        video_generate: ['model'],
        video_edit: ['model'],
        video_extend: ['model'],
        video_status: ['model'],
        audio_speech: ['model'],
        video_follow: ['app'],
      });
      const follow = tools.find((tool) => tool.name === 'video_follow');
      const status = tools.find((tool) => tool.name === 'video_status');
      expect(follow?.inputSchema).toEqual(status?.inputSchema);
      expect(follow?.outputSchema).toEqual(status?.outputSchema);
    });

    it('lists both views and reads them as self-contained HTML in the MCP Apps profile', async () => {
      const { resources } = await conn.client.listResources();
      expect(resources.filter((r) => r.uri.startsWith('ui://')).map((r) => [r.uri, r.mimeType])).toEqual([
        [VIDEO_VIEW, VIEW_MIME],
        [AUDIO_VIEW, VIEW_MIME],
      ]);
      for (const uri of [VIDEO_VIEW, AUDIO_VIEW]) {
        const [content] = (await conn.client.readResource({ uri })).contents;
        expect(content?.mimeType).toBe(VIEW_MIME);
        const html = String((content as { text: string }).text);
        expect(html).toMatch(/^<!doctype html>/);
        // Nothing fetched: no external script, style sheet or import.
        expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|import\s*\(?\s*["']https?:/i);
      }
      // A view plays only files read through the host: its content policy names no origin.
      const [video] = (await conn.client.readResource({ uri: VIDEO_VIEW })).contents;
      expect(video?._meta).toEqual({ ui: { prefersBorder: true } });
      const [audio] = (await conn.client.readResource({ uri: AUDIO_VIEW })).contents;
      expect(audio?._meta).toEqual({ ui: { prefersBorder: true } });
    });

    it('is served each view in at most 150 KB', async () => {
      for (const uri of [VIDEO_VIEW, AUDIO_VIEW]) {
        const [content] = (await conn.client.readResource({ uri })).contents;
        const bytes = Buffer.byteLength((content as { text: string }).text);
        console.log(`${uri}: ${bytes} bytes`);
        expect(bytes).toBeLessThanOrEqual(VIEW_MAX_BYTES);
      }
    });

    it('gets the same results as a client without it', async () => {
      const plain = await connect(['--result-format', 'structured'], client('test-client', null));
      const args = { text: 'Same words', model: 'openai/tts-1/alloy', format: 'wav' };
      const mine = (await conn.client.callTool({ name: 'audio_speech', arguments: args })) as CallToolResult;
      const theirs = (await plain.client.callTool({
        name: 'audio_speech',
        arguments: args,
      })) as CallToolResult;
      expect(timeless(mine)).toBe(timeless(theirs));
    });

    it('gives a view the structured content a text-only client leaves out, in _meta only', async () => {
      const text = await connect([], client('claude-code'));
      const plain = await connect([], client('claude-code', null));
      const args = { text: 'Meta words', model: 'openai/tts-1/alloy', format: 'wav' };
      const mine = (await text.client.callTool({ name: 'audio_speech', arguments: args })) as CallToolResult;
      const theirs = (await plain.client.callTool({
        name: 'audio_speech',
        arguments: args,
      })) as CallToolResult;
      expect(mine.structuredContent).toBeUndefined();
      const { _meta, ...rest } = mine;
      expect(timeless(rest)).toBe(timeless(theirs));
      expect(_meta?.[VIEW_DATA_KEY]).toMatchObject({ model: 'openai/tts-1/alloy', requested_format: 'wav' });
    });
  });

  it('serves the same views from the bundle (dist/cli.js) as from source', async () => {
    const fromSource = await connect([], client());
    const bundle = await connectStdio({ ...ref.env, GATEWAY_LOG_LEVEL: 'error' }, [], client());
    try {
      for (const uri of [VIDEO_VIEW, AUDIO_VIEW]) {
        const [built] = (await bundle.client.readResource({ uri })).contents;
        const [source] = (await fromSource.client.readResource({ uri })).contents;
        expect((built as { text: string }).text).toBe((source as { text: string }).text);
      }
    } finally {
      await bundle.close();
    }
  });

  it('shows no view and declares no extension with GATEWAY_VIEWS=off', async () => {
    const conn = await connect(['--result-format', 'text'], client(), { GATEWAY_VIEWS: 'off' });
    expect((conn.client.getServerCapabilities() as { extensions?: unknown }).extensions).toBeUndefined();
    const { tools } = await conn.client.listTools();
    expect(`${JSON.stringify(tools, null, 2)}\n`).toBe(
      readFileSync(join(SNAPSHOTS, 'tools-text.json'), 'utf8'),
    );
    expect((await conn.client.listResources()).resources).toEqual([]);
  });
});

/** The extension's own reading of a tool's view (its types are the v2 SDK's; the tool was listed by a v1 client). */
function uiUriOf(tool: Tool): string | undefined {
  return getToolUiResourceUri(tool as Parameters<typeof getToolUiResourceUri>[0]);
}
