// The views in a real browser: headless Chromium frames each view through the extension's host
// bridge (view-host.ts), the view gets a real tool result from the server on the reference service,
// plays the real media (loadedmetadata with its real duration), follows a running video job to
// done through real video_follow calls (the view's own tool) and saves it. Screenshots go to test-output/views/.
// Without Chromium these tests are skipped, and the run says so and how to install it (with
// CI=true they fail: test/harness/requires.ts).
import { join } from 'node:path';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXED_DEFAULT_MODELS } from '../../src/config/model-ids.js';
import { useReferenceService } from '../harness/gateway.js';
import { type Connected, connectInMemory, tempDir } from '../harness/harness.js';
import { scaled } from '../harness/time.js';
import { CLIP_SECONDS, HAS_CHROMIUM, ViewHost, viewHostClient } from './view-host.js';

interface Seekable {
  currentTime: number;
  addEventListener(type: 'seeked', listener: (value: unknown) => void, options: { once: boolean }): void;
}

/** The parts of the browser's DOM the checks below read (the tests are compiled without the DOM's types). */
interface Playable {
  paused: boolean;
  addEventListener(type: 'playing', listener: (value: unknown) => void): void;
}
interface Shown {
  dataset: Record<string, string | undefined>;
  getBoundingClientRect(): { height: number };
  ownerDocument: {
    activeElement: { tagName: string; textContent: string | null } | null;
    documentElement: Shown;
    defaultView: {
      innerWidth: number;
      getComputedStyle(of: Shown): { color: string; backgroundColor: string };
    };
  };
}

describe.skipIf(!HAS_CHROMIUM)('the views in Chromium', () => {
  const ref = useReferenceService();
  const host = new ViewHost();
  let conn: Connected;
  let tools: Tool[];
  const tool = (name: string) => tools.find((t) => t.name === name) as Tool;
  const call = async (name: string, args: Record<string, unknown>) =>
    (await conn.client.callTool({ name, arguments: args })) as CallToolResult;
  /** Starts a video job on the given timing and shows its view, as a host does after the call: its status. */
  const showVideoJob = async (
    timing: Parameters<typeof ref.service.setVideoTiming>[0],
    prompt: string,
    waitSeconds = 0,
  ) => {
    host.forwarded.length = 0;
    ref.service.setVideoTiming(timing);
    const args = { prompt, wait_seconds: waitSeconds };
    const result = await call('video_generate', args);
    await host.show(tool('video_generate'), args, result);
    return (result.structuredContent as { status: string }).status;
  };
  /** What has the keyboard's focus in the view: a button's label, or the tag of another element. */
  const focused = () =>
    host.frame.locator(':root').evaluate((root: Shown) => {
      const active = root.ownerDocument.activeElement;
      return active?.tagName === 'BUTTON'
        ? (active.textContent ?? '')
        : (active?.tagName.toLowerCase() ?? '');
    });

  beforeAll(async () => {
    await host.start();
    const client = viewHostClient();
    conn = await connectInMemory(
      {
        ...ref.env,
        GATEWAY_OUTPUT_DIR: join(tempDir('gtm-views-browser-'), 'out'),
        GATEWAY_ALLOW_PRIVATE_URLS: new URL(host.url).host,
      },
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

  it('plays the saved speech with its real duration, beside its text, model, voice and file name', {
    timeout: scaled(60_000),
  }, async () => {
    const args = { text: 'Hello from the audio view.', model: 'selfhosted-tts/kokoro', format: 'wav' };
    const result = await call('audio_speech', args);
    const saved = result.structuredContent as { file_path: string; bytes: number };
    await host.show(tool('audio_speech'), args, result);
    const audio = host.frame.locator('audio[data-duration]');
    await audio.waitFor({ timeout: scaled(15_000) });
    // 24 kHz, 16-bit mono: 48,000 bytes a second after the 44-byte header.
    expect(Number(await audio.getAttribute('data-duration'))).toBeCloseTo((saved.bytes - 44) / 48_000, 2);
    const shown = await host.frame.locator('main').innerText();
    expect(shown).toContain(args.text);
    expect(shown).toContain('selfhosted-tts/kokoro');
    expect(shown).toContain(saved.file_path.split('/').at(-1));
    expect(await host.frame.locator('.path').innerText()).toBe(saved.file_path);
    await host.screenshot('audio');
    // From the keyboard: a native button takes the focus, and Enter presses it.
    await host.frame.getByRole('button', { name: 'Download' }).focus();
    await host.page.keyboard.press('Enter');
    for (let i = 0; i < 50 && host.forwarded.length < 2; i++) await host.page.waitForTimeout(100);
    expect(host.forwarded.map((f) => f.method)).toEqual(['resources/read', 'ui/download-file']);
    const [file] = host.forwarded[1]?.params.contents ?? [];
    expect(file?.resource?.uri).toBe(`gateway-tools://output/${saved.file_path.split('/').at(-1)}`);
    expect(Buffer.from(file?.resource?.blob ?? '', 'base64').length).toBe(saved.bytes);
    await host.frame.getByRole('button', { name: 'Open' }).click();
    for (let i = 0; i < 50 && host.forwarded.length < 3; i++) await host.page.waitForTimeout(100);
    expect(host.forwarded[2]).toEqual({
      method: 'ui/open-link',
      params: { url: `file://${saved.file_path}` },
    });
  });

  it("plays the reference gateway's MP3 speech, its frames as long as the speech would be", {
    timeout: scaled(60_000),
  }, async () => {
    host.forwarded.length = 0;
    const args = { text: 'An MP3 the browser decodes.', model: 'openai/tts-1/alloy' };
    const result = await call('audio_speech', args);
    const saved = result.structuredContent as { bytes: number; mime_type: string };
    expect(saved.mime_type).toBe('audio/mpeg');
    await host.show(tool('audio_speech'), args, result);
    const audio = host.frame.locator('audio[data-duration]');
    await audio.waitFor({ timeout: scaled(15_000) });
    // 72-byte frames of 24 ms after the 10-byte tag.
    const frames = Math.floor((saved.bytes - 10) / 72);
    expect(Number(await audio.getAttribute('data-duration'))).toBeCloseTo(frames * 0.024, 1);
  });

  it('follows a running job to done through video_follow, then plays it without a click, from a provider origin its policy does not name', {
    timeout: scaled(90_000),
  }, async () => {
    host.forwarded.length = 0;
    ref.service.setVideoTiming({ pollsUntilDone: 12, redirectVideoTo: host.url });
    const args = { prompt: 'A red kite over green hills at dawn', wait_seconds: 0 };
    const result = await call('video_generate', args);
    expect((result.structuredContent as { status: string }).status).toBe('running');
    await host.show(tool('video_generate'), args, result);
    const bar = host.frame.locator('.bar');
    const seen = new Set<string>();
    const status = host.frame.locator('.status');
    for (let i = 0; i < 200 && (await status.getAttribute('data-state')) !== 'done'; i += 1) {
      const progress = await bar.getAttribute('data-progress');
      if (progress) seen.add(progress);
      if (seen.size === 1 && i % 10 === 0) await host.screenshot('video-running');
      await host.page.waitForTimeout(100);
    }
    expect(await status.getAttribute('data-state')).toBe('done');
    expect([...seen].map(Number)).toEqual([...seen].map(Number).sort((a, b) => a - b));
    expect(seen.size).toBeGreaterThanOrEqual(2);
    const polls = host.forwarded.filter((f) => f.method === 'tools/call');
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(polls.map((f) => f.params.name))).toEqual(new Set(['video_follow']));
    // The gateway's URL redirects to another origin, which the view's policy does not name: the
    // view has the server save the file and plays it from there, without a click.
    const video = host.frame.locator('video[data-duration]');
    await video.waitFor({ timeout: scaled(20_000) });
    expect(Number(await video.getAttribute('data-duration'))).toBeCloseTo(CLIP_SECONDS, 1);
    const download = host.forwarded.filter((f) => f.method === 'tools/call').at(-1);
    expect(download?.params.arguments).toMatchObject({ download: true });
    expect(await host.frame.getByRole('button', { name: 'Save' }).count()).toBe(0);
    expect(await host.frame.locator('main').innerText()).toContain(args.prompt);
    await host.frame.locator('video').evaluate((v: Seekable) => {
      v.currentTime = 1;
      return new Promise((resolve) => v.addEventListener('seeked', resolve, { once: true }));
    });
    await host.screenshot('video');
    await host.frame.getByRole('button', { name: 'Fullscreen' }).click();
    for (let i = 0; i < 50 && !host.forwarded.some((f) => f.method === 'ui/request-display-mode'); i++)
      await host.page.waitForTimeout(100);
    expect(host.forwarded.find((f) => f.method === 'ui/request-display-mode')?.params).toEqual({
      mode: 'fullscreen',
    });
    expect(await host.frame.getByRole('button', { name: 'Picture in picture' }).count()).toBe(1);
    // Nothing the view did started a generation.
    expect(ref.service.counters['videos.generations']).toBe(1);
  });

  it('follows a job through a gateway that stops answering for a while, to done, without a click', {
    timeout: scaled(90_000),
  }, async () => {
    host.forwarded.length = 0;
    ref.service.setVideoTiming({ pollsUntilDone: 4, redirectVideoTo: host.url });
    // The model named, so the view looks up none (a listing of recent jobs polls the running ones):
    // each poll the faults below meet is one of the view's checks of this job.
    const args = { prompt: 'A lighthouse through fog', wait_seconds: 0, model: FIXED_DEFAULT_MODELS.video };
    const result = await call('video_generate', args);
    // The gateway answers the next six polls 503: more than the server's own retries of one check.
    ref.service.inject('videos.poll', { status: 503, times: 6 });
    await host.show(tool('video_generate'), args, result);
    const status = host.frame.locator('.status');
    await host.frame.locator('.status[data-state="waiting"]').waitFor({ timeout: scaled(20_000) });
    expect(await status.innerText()).toMatch(/^The gateway is not answering; trying again in \d+ s$/);
    await host.screenshot('video-waiting');
    await host.frame.locator('.status[data-state="done"]').waitFor({ timeout: scaled(60_000) });
    // At least one check failed and a later one went on.
    const checks = host.forwarded.filter((f) => f.method === 'tools/call');
    expect(checks.length).toBeGreaterThanOrEqual(2);
    expect(await host.frame.getByRole('button', { name: 'Check again' }).count()).toBe(0);
    ref.service.clearFaults();
  });

  it('stops following when the host cancels the call, and checks again on request', {
    timeout: scaled(90_000),
  }, async () => {
    host.forwarded.length = 0;
    ref.service.setVideoTiming({ pollsUntilDone: 10_000 });
    const args = { prompt: 'A clock that never stops', wait_seconds: 0 };
    const result = await call('video_generate', args);
    await host.show(tool('video_generate'), args, result);
    const checks = () => host.forwarded.filter((f) => f.method === 'tools/call').length;
    for (let i = 0; i < 100 && checks() < 1; i++) await host.page.waitForTimeout(100);
    await host.cancelTool('the user stopped it');
    const status = host.frame.locator('.status[data-state="stopped"]');
    await status.waitFor({ timeout: scaled(10_000) });
    expect(await status.innerText()).toBe('The call was cancelled, so the view stopped following the job.');
    // The check under way when the call was cancelled may still end; none starts after it.
    await host.page.waitForTimeout(4_000);
    const after = checks();
    await host.page.waitForTimeout(4_000);
    expect(checks()).toBe(after);
    await host.screenshot('video-stopped');

    await host.frame.getByRole('button', { name: 'Check again' }).click();
    for (let i = 0; i < 100 && checks() === after; i++) await host.page.waitForTimeout(100);
    expect(checks()).toBeGreaterThan(after);
    await host.tearDown();
    await host.frame.locator('.status[data-state="stopped"]').waitFor({ timeout: scaled(10_000) });
    await host.page.waitForTimeout(4_000);
    const torn = checks();
    await host.page.waitForTimeout(4_000);
    expect(checks()).toBe(torn);
  });

  /** The text the view shows beside a term of its facts (Model, Job). */
  const fact = (term: string) => host.frame.locator(`dt:text-is("${term}") + dd`).innerText();
  const calls = () => host.forwarded.filter((f) => f.method === 'tools/call');

  it(
    'cancelled before its first result: says it stopped, and Check again finds the job the call started and follows it',
    async () => {
      host.forwarded.length = 0;
      ref.service.setVideoTiming({ pollsUntilDone: 10_000 });
      const args = { prompt: 'A kettle left on before the answer came', wait_seconds: 0 };
      // The call reaches the server and starts a job; the host cancels it before its result comes.
      const started = await call('video_generate', args);
      const jobId = (started.structuredContent as { job_id: string }).job_id;
      await host.show(tool('video_generate'), args);
      const status = host.frame.locator('.status');
      expect(await status.innerText()).toBe('Waiting for the job…');
      await host.cancelTool('the user pressed Esc');
      await host.frame.locator('.status[data-state="stopped"]').waitFor({ timeout: 10_000 });
      expect(await status.innerText()).toBe(
        'The call was cancelled before it named its job, so the view stopped waiting for it.',
      );
      expect(calls()).toEqual([]);
      await host.screenshot('video-cancelled-early');

      await host.frame.getByRole('button', { name: 'Check again' }).click();
      for (let i = 0; i < 100 && !calls().some((c) => c.params.arguments?.job_id === jobId); i++)
        await host.page.waitForTimeout(100);
      // Found among the recent jobs (video_follow without job_id), then followed by its id.
      expect(calls()[0]?.params).toMatchObject({ name: 'video_follow', arguments: {} });
      expect(calls().some((c) => c.params.arguments?.job_id === jobId)).toBe(true);
      await host.frame.locator('.status[data-state="running"]').waitFor({ timeout: 10_000 });
      expect(await fact('Job')).toBe(jobId);
      expect(await fact('Model')).toBe(FIXED_DEFAULT_MODELS.video);
      await host.tearDown();
      await host.frame.locator('.status[data-state="stopped"]').waitFor({ timeout: 10_000 });
      expect(ref.service.counters['videos.generations']).toBeGreaterThanOrEqual(1);
    },
    scaled(90_000),
  );

  it(
    'cancelled before the call started anything: Check again says no job was started',
    async () => {
      host.forwarded.length = 0;
      await host.show(tool('video_generate'), {
        prompt: 'A submit that never left the host',
        wait_seconds: 0,
      });
      await host.cancelTool('the user pressed Esc');
      await host.frame.getByRole('button', { name: 'Check again' }).click();
      const status = host.frame.locator('.status');
      for (let i = 0; i < 100 && !/not started/.test(await status.innerText()); i++)
        await host.page.waitForTimeout(100);
      expect(await status.innerText()).toBe(
        'No job from this call is among your recent jobs: it was not started.',
      );
      expect(await status.getAttribute('data-state')).toBe('stopped');
      expect(await host.frame.getByRole('button', { name: 'Check again' }).count()).toBe(1);
    },
    scaled(60_000),
  );

  it(
    'torn down before its first result: says it stopped, and offers Check again',
    async () => {
      host.forwarded.length = 0;
      await host.show(tool('video_generate'), {
        prompt: 'A view closed while its call ran',
        wait_seconds: 0,
      });
      await host.tearDown();
      const status = host.frame.locator('.status[data-state="stopped"]');
      await status.waitFor({ timeout: 10_000 });
      expect(await status.innerText()).toBe('Stopped.');
      expect(await host.frame.getByRole('button', { name: 'Check again' }).count()).toBe(1);
    },
    scaled(60_000),
  );

  it(
    'shows the model the server used when the call named none, not "the default"',
    async () => {
      await showVideoJob({ pollsUntilDone: 10_000 }, 'A model nobody named');
      for (let i = 0; i < 100 && (await fact('Model')) !== FIXED_DEFAULT_MODELS.video; i++)
        await host.page.waitForTimeout(100);
      expect(await fact('Model')).toBe(FIXED_DEFAULT_MODELS.video);
      await host.cancelTool('done looking');
    },
    scaled(60_000),
  );

  it('walks the finished video from the keyboard: the player, the display modes, Download and Open, each pressed with Enter or Space', {
    timeout: scaled(60_000),
  }, async () => {
    const status = await showVideoJob(
      { pollsUntilDone: 0, redirectVideoTo: host.url },
      'A paper boat on a pond',
      5,
    );
    expect(status).toBe('done');
    await host.frame.locator('video[data-duration]').waitFor({ timeout: scaled(20_000) });
    // From the host into the view: the player's own controls (several stops), then the buttons in
    // the order they are shown, then out of the view.
    const stops: string[] = [];
    for (let i = 0; i < 12 && stops.at(-1) !== 'body'; i++) {
      await host.page.keyboard.press('Tab');
      stops.push(await focused());
    }
    expect(stops.filter((stop, i) => stop !== stops[i - 1])).toEqual([
      'video',
      'Fullscreen',
      'Picture in picture',
      'Download',
      'Open',
      'body',
    ]);
    // Round again to the player's first control (play): Space plays the video.
    await host.page.keyboard.press('Tab');
    expect(await focused()).toBe('video');
    await host.page.keyboard.press('Space');
    await host.frame
      .locator('video')
      .evaluate(
        (v: Playable) =>
          new Promise((resolve) => (v.paused ? v.addEventListener('playing', resolve) : resolve(0))),
      );
    // Each button from the keyboard; after a display mode changed, the focus stays on the buttons
    // of the new mode.
    for (const [label, key, method, then] of [
      ['Fullscreen', 'Enter', 'ui/request-display-mode', 'Back inline'],
      ['Download', 'Space', 'ui/download-file', 'Download'],
      ['Open', 'Enter', 'ui/open-link', 'Open'],
    ] as const) {
      while ((await focused()) !== label) await host.page.keyboard.press('Tab');
      await host.page.keyboard.press(key);
      for (let i = 0; i < 50 && !host.forwarded.some((f) => f.method === method); i++)
        await host.page.waitForTimeout(100);
      expect(host.forwarded.map((f) => f.method)).toContain(method);
      for (let i = 0; i < 50 && (await focused()) !== then; i++) await host.page.waitForTimeout(100);
      expect(await focused()).toBe(then);
    }
  });

  it('keeps the focus on Save when saving fails again, and moves it to the player once the video plays', {
    timeout: scaled(60_000),
  }, async () => {
    // The provider's file cannot be fetched at first: the view's own save fails and offers Save.
    ref.service.inject('files.video', { status: 503, times: 20 });
    await showVideoJob({ pollsUntilDone: 0, redirectVideoTo: undefined }, 'A lighthouse in fog', 5);
    const note = host.frame.locator('.note[data-error]');
    await note.waitFor({ timeout: scaled(20_000) });
    expect(await note.innerText()).toMatch(/^Saving failed: /);
    const saves = () =>
      host.forwarded.filter((f) => f.method === 'tools/call' && f.params.arguments?.download === true).length;
    for (let i = 0; i < 5 && (await focused()) !== 'Save'; i++) await host.page.keyboard.press('Tab');
    expect(await focused()).toBe('Save');
    // Pressed while the file still cannot be fetched: it fails again, and the focus stays.
    const before = saves();
    await host.page.keyboard.press('Enter');
    for (let i = 0; i < 100 && saves() === before; i++) await host.page.waitForTimeout(100);
    await host.frame.locator('button[aria-disabled]').waitFor({ state: 'detached', timeout: scaled(20_000) });
    expect(saves()).toBe(before + 1);
    expect(await note.innerText()).toMatch(/^Saving failed: /);
    expect(await focused()).toBe('Save');
    // Once the file can be fetched, Enter saves it, the video plays, and the focus is on the player.
    ref.service.clearFaults();
    await host.page.keyboard.press('Enter');
    const video = host.frame.locator('video[data-duration]');
    await video.waitFor({ timeout: scaled(20_000) });
    expect(Number(await video.getAttribute('data-duration'))).toBeCloseTo(CLIP_SECONDS, 1);
    expect(await focused()).toBe('video');
    expect(await host.frame.getByRole('button', { name: 'Save' }).count()).toBe(0);
  });

  it('reaches Check again from the keyboard once it stopped following, and checks again with Enter', {
    timeout: scaled(60_000),
  }, async () => {
    await showVideoJob({ pollsUntilDone: 10_000 }, 'A kettle about to boil');
    await host.cancelTool('the user stopped it');
    await host.frame.locator('.status[data-state="stopped"]').waitFor({ timeout: scaled(10_000) });
    await host.page.keyboard.press('Tab');
    expect(await focused()).toBe('Check again');
    const checks = () => host.forwarded.filter((f) => f.method === 'tools/call').length;
    const before = checks();
    await host.page.keyboard.press('Enter');
    for (let i = 0; i < 50 && checks() === before; i++) await host.page.waitForTimeout(100);
    expect(checks()).toBeGreaterThan(before);
    await host.tearDown();
  });

  it("tells the host its size as its content grows, and follows the host's theme when it changes", {
    timeout: scaled(60_000),
  }, async () => {
    await showVideoJob({ pollsUntilDone: 2, redirectVideoTo: host.url }, 'A hot air balloon rising');
    await host.frame.locator('video[data-duration]').waitFor({ timeout: scaled(20_000) });
    const page = () =>
      host.frame.locator(':root').evaluate((root: Shown) => ({
        width: Math.ceil(root.ownerDocument.defaultView.innerWidth),
        height: Math.ceil(root.getBoundingClientRect().height),
      }));
    const shown = await page();
    let sizes = await host.viewSizes();
    for (let i = 0; i < 50 && sizes.at(-1)?.height !== shown.height; i++) {
      await host.page.waitForTimeout(100);
      sizes = await host.viewSizes();
    }
    // What the running job showed first was shorter than the playing video; the last size is the page's.
    expect(sizes.at(-1)).toEqual(shown);
    expect(sizes[0]?.height).toBeLessThan(shown.height);

    const colours = () =>
      host.frame.locator('body').evaluate((body: Shown) => {
        const style = body.ownerDocument.defaultView.getComputedStyle(body);
        return {
          theme: body.ownerDocument.documentElement.dataset.theme,
          text: style.color,
          background: style.backgroundColor,
        };
      });
    expect(await colours()).toEqual({
      theme: 'light',
      text: 'rgb(17, 24, 39)',
      background: 'rgb(255, 255, 255)',
    });
    await host.goDark();
    await host.frame.locator(':root[data-theme="dark"]').waitFor({ timeout: scaled(5_000) });
    expect(await colours()).toEqual({
      theme: 'dark',
      text: 'rgb(249, 250, 251)',
      background: 'rgb(17, 24, 39)',
    });
  });

  it('answers the host: ping and teardown with an empty result, a request it does not serve with "Method not found"', {
    timeout: scaled(60_000),
  }, async () => {
    const args = { text: 'Are you there?', model: 'selfhosted-tts/kokoro', format: 'wav' };
    await host.show(tool('audio_speech'), args, await call('audio_speech', args));
    expect(await host.askView('ping')).toEqual({ result: {} });
    expect(await host.askView('tools/list')).toEqual({ error: 'Method not found' });
    await expect(host.tearDown()).resolves.toEqual({});
  });

  it("shows a failed job's reason", { timeout: scaled(60_000) }, async () => {
    ref.service.setVideoTiming({
      pollsUntilDone: 1,
      failWith: { code: 'moderated', message: 'The prompt was refused' },
    });
    const job = await call('video_generate', { prompt: 'Something refused', wait_seconds: 0 });
    const jobId = (job.structuredContent as { job_id: string }).job_id;
    const args = { job_id: jobId, wait_seconds: 5 };
    const result = await call('video_status', args);
    await host.show(tool('video_status'), args, result);
    const status = host.frame.locator('.status[data-state="failed"]');
    await status.waitFor({ timeout: scaled(10_000) });
    expect(await status.innerText()).toContain('refused');
  });
});
