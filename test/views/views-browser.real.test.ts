// The views in Chromium on the real gateway, 9router (with its fake providers): the view gets the
// real tool result, follows a real running job to done through video_follow calls (the view's own
// tool), saves the file without a click, and hands it to the host to download or open. 9router's
// fake providers send bytes that are not decodable media, so the players here are checked to say
// so; views-browser.test.ts plays real media on the reference service.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Connected, connectInMemory, tempDir } from '../harness/harness.js';
import { scaled } from '../harness/time.js';
import { realGatewayEnv, unique } from '../nine-router/use.js';
import { HAS_CHROMIUM, ViewHost, viewHostClient } from './view-host.js';

describe.skipIf(!HAS_CHROMIUM)('the views in Chromium, on 9router', () => {
  const host = new ViewHost();
  let conn: Connected;
  let tools: Tool[];
  const tool = (name: string) => tools.find((t) => t.name === name) as Tool;
  const call = async (name: string, args: Record<string, unknown>) =>
    (await conn.client.callTool({ name, arguments: args })) as CallToolResult;

  beforeAll(async () => {
    await host.start();
    const client = viewHostClient();
    conn = await connectInMemory(
      { ...realGatewayEnv(inject('realGateway')), GATEWAY_OUTPUT_DIR: join(tempDir('gtm-views-9r-'), 'out') },
      [],
      client,
    );
    host.client = conn.client;
    tools = (await conn.client.listTools()).tools;
  }, scaled(60_000));
  afterAll(async () => {
    await host.stop();
    await conn?.close();
  });

  it('shows the saved speech with its model, voice and file name', { timeout: scaled(60_000) }, async () => {
    const args = { text: `Hello from 9router ${unique()}`, model: 'openai/tts-1/alloy' };
    const result = await call('audio_speech', args);
    expect(result.isError).toBeFalsy();
    const saved = result.structuredContent as { file_path: string };
    await host.show(tool('audio_speech'), args, result);
    const main = host.frame.locator('main');
    // The fake provider's bytes are no audio: the view says so, and shows no player that cannot play.
    await host.frame
      .getByText(/cannot play this audio format; the file is saved/)
      .waitFor({ timeout: scaled(15_000) });
    expect(await host.frame.locator('audio').count()).toBe(0);
    expect(await host.frame.locator('.path').innerText()).toBe(saved.file_path);
    const shown = await main.innerText();
    // The model, and its voice on a line of its own.
    expect(await host.frame.locator('dd').allInnerTexts()).toEqual(
      expect.arrayContaining(['openai/tts-1', 'alloy']),
    );
    expect(shown).toContain(saved.file_path.split('/').at(-1));
    expect(host.forwarded.map((f) => f.method)).toEqual(['resources/read']);
  });

  it('follows a running job to done through video_follow and saves the file', {
    timeout: scaled(120_000),
  }, async () => {
    host.forwarded.length = 0;
    const args = { prompt: `A kite ${unique()} polls-3 video-bytes-6000`, duration: 6, wait_seconds: 0 };
    const result = await call('video_generate', args);
    expect((result.structuredContent as { status: string }).status).toBe('running');
    await host.show(tool('video_generate'), args, result);
    await host.frame.locator('.status[data-state="done"]').waitFor({ timeout: scaled(60_000) });
    const polls = host.forwarded.filter((f) => f.method === 'tools/call');
    expect(polls.length).toBeGreaterThanOrEqual(1);
    expect(new Set(polls.map((f) => f.params.name))).toEqual(new Set(['video_follow']));
    // Saved without a click; the fake provider's bytes are no video: the view says it is saved
    // but cannot be played.
    await host.frame
      .getByText(/is saved, but this browser cannot play it/)
      .waitFor({ timeout: scaled(20_000) });
    expect(await host.frame.locator('video').count()).toBe(0);
    const download = host.forwarded.filter((f) => f.method === 'tools/call').at(-1);
    expect(download?.params.arguments).toMatchObject({ download: true });
    const path = await host.frame.locator('.path').innerText();
    expect(path.startsWith(conn.runtime.config.outputDir)).toBe(true);
    expect(existsSync(path) && statSync(path).size).toBe(6000);
    // A file the browser cannot play is still the person's to take: Download hands the host its
    // exact bytes, and Open its file: URL.
    await host.frame.getByRole('button', { name: 'Download' }).click();
    const asked = async (method: string) => {
      for (let i = 0; i < 50 && !host.forwarded.some((f) => f.method === method); i++)
        await host.page.waitForTimeout(100);
      return host.forwarded.find((f) => f.method === method);
    };
    const [file] = (await asked('ui/download-file'))?.params.contents ?? [];
    expect(file?.resource?.uri).toBe(`gateway-tools://output/${path.split('/').at(-1)}`);
    expect(Buffer.from(file?.resource?.blob ?? '', 'base64').equals(readFileSync(path))).toBe(true);
    await host.frame.getByRole('button', { name: 'Open' }).click();
    expect((await asked('ui/open-link'))?.params).toEqual({ url: `file://${path}` });
  });
});
