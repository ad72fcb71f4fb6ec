// `gateway-tools-mcp doctor` (the built CLI) on the reference service alone: its whole report, and
// what only it can make (a gateway gone, missing providers, forged model ids, no health route, an
// unwritable output directory). The API key checks run on both gateways in doctor.real.test.ts.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DoctorReport } from '../../../src/doctor/doctor.js';
import { runCli, tempDir } from '../../harness/harness.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';
import { DEFAULT_MODEL_LISTS, DEFAULT_WEB_MODELS } from '../../reference-service/state.js';
import { lineFor } from './report-lines.js';

const SECRET = 'sk-doctor-secret-0123456789abcdef';
let service: ReferenceService;

beforeAll(async () => {
  service = await startReferenceService({ apiKey: SECRET });
});
afterAll(() => service.close());
afterEach(() => {
  service.clearFaults();
  service.setWebModels(DEFAULT_WEB_MODELS.map((m) => ({ ...m })));
  service.setModelList(
    'tts',
    DEFAULT_MODEL_LISTS.tts.map((m) => ({ ...m })),
  );
});

async function doctor(env: Record<string, string>, args: string[] = []) {
  const cwd = env.CWD ?? tempDir('gtm-doctor-');
  const run = await runCli(['doctor', ...args], { GATEWAY_BASE_URL: service.url, CWD: cwd, ...env });
  expect(run.stdout + run.stderr).not.toContain(SECRET);
  return { ...run, cwd };
}

describe('gateway-tools-mcp doctor', () => {
  it('reports a healthy service with the defaults the tools use, exits 0 and leaves nothing behind', async () => {
    const run = await doctor({ GATEWAY_API_KEY: SECRET });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^gateway-tools-mcp \d+\.\d+\.\d+ doctor\nservice http:\/\/127\.0\.0\.1:\d+, API key set\n/,
    );
    expect(lineFor(run.stdout, /Service reachable/)).toMatch(/^✓ .*GET \/api\/health/);
    expect(lineFor(run.stdout, /API key/)).toMatch(/^✓ API key accepted/);
    expect(lineFor(run.stdout, /Web search/)).toBe(
      '✓ Web search (web_search): tavily (discovered at /v1/models/web; 1 listed)',
    );
    expect(lineFor(run.stdout, /Web fetch/)).toMatch(/^✓ .*: jina-reader/);
    expect(lineFor(run.stdout, /Chat/)).toMatch(
      /^✓ .*: openai\/gpt-4o-mini \(discovered at \/v1\/models; 3 listed\)/,
    );
    expect(lineFor(run.stdout, /Speech/)).toBe(
      '✓ Speech (audio_speech): openai/tts-1 with voice alloy, sent as openai/tts-1/alloy (discovered at /v1/models/tts; 4 listed)',
    );
    expect(lineFor(run.stdout, /Transcription/)).toMatch(/^✓ .*: groq\/whisper-large-v3/);
    // The gateway lists no video models: no ✓ for what was never seen.
    expect(lineFor(run.stdout, /Video/)).toBe(
      '! Video (video_generate): xai/grok-imagine-video (built-in default; listed, not proven: the gateway does not list video models)',
    );
    expect(lineFor(run.stdout, /Output directory/)).toMatch(/^✓ .*will be created on the first save/);
    expect(run.stdout).not.toMatch(/^✗/m);
    expect(run.stdout.split('\n').filter((line) => line.startsWith('! '))).toHaveLength(1);
    expect(run.stdout.trim().split('\n').at(-2)).toBe('Ready: every required check passed (1 warning).');
    expect(run.stdout.trim().split('\n').at(-1)).toBe(
      "The providers' own keys were not tried: `doctor --live` sends one search and one fetch (billed).",
    );
    // The output directory is checked, not created, and the probe file is gone.
    expect(readdirSync(run.cwd)).toEqual([]);
  });

  it('prints JSON with --json', async () => {
    const cwd = tempDir('gtm-doctor-');
    mkdirSync(join(cwd, 'gateway-output'));
    const run = await doctor({ GATEWAY_API_KEY: SECRET, CWD: cwd }, ['--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as DoctorReport;
    expect(report).toMatchObject({ ok: true, base_url: service.url, api_key: 'set' });
    expect(report.checks.map((c) => c.id)).toEqual([
      'service',
      'api_key',
      'search',
      'fetch',
      'chat',
      'summary',
      'speech',
      'transcription',
      'video',
      'output_dir',
      'output_dir_default',
      'workspace',
      'input_root',
      'ledger',
      'limits',
    ]);
    // Every check passes; video's is a caveat (the gateway lists no video models).
    expect(report.checks.filter((c) => c.status !== 'ok').map((c) => [c.id, c.status])).toEqual([
      ['video', 'warn'],
    ]);
    expect(report.checks.find((c) => c.id === 'output_dir')?.message).toMatch(/^Output directory writable/);
    expect(readdirSync(join(cwd, 'gateway-output'))).toEqual([]);
  });

  it('shows no control characters from the gateway: a forged line cannot reach the terminal', async () => {
    const forged = 'openai/tts-1\u001b[2K\r\u001b[32m✓ Everything is fine\u001b[0m\n✓ forged';
    service.setModelList('tts', [
      { id: forged, owned_by: 'openai\u001b]0;title\u0007' },
      { id: 'openai/tts-1-hd', owned_by: 'openai\u0085\u009b31m' },
    ]);
    const run = await doctor({ GATEWAY_API_KEY: SECRET });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point
    expect(run.stdout + run.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(run.stdout).not.toMatch(/forged|Everything is fine/);
    expect(lineFor(run.stdout, /Speech/)).toMatch(/openai\/tts-1-hd/);
  });

  it('fails when the service cannot be reached', async () => {
    const gone = await startReferenceService();
    const url = gone.url;
    await gone.close();
    const run = await doctor({ GATEWAY_BASE_URL: url, GATEWAY_API_KEY: SECRET, GATEWAY_MAX_RETRIES: '0' });
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /reach/)).toBe(`✗ Cannot reach the service at ${url} (ECONNREFUSED)`);
    expect(run.stdout).toMatch(/fix: Start the gateway .* or set GATEWAY_BASE_URL/);
    expect(lineFor(run.stdout, /API key/)).toMatch(/^· API key: not checked/);
  });

  it('fails when the gateway has no web search or fetch provider, unless they are set', async () => {
    service.setWebModels([]);
    const none = await doctor({ GATEWAY_API_KEY: SECRET });
    expect(none.code).toBe(1);
    expect(lineFor(none.stdout, /Web search/)).toBe(
      '✗ Web search (web_search): no model (/v1/models/web lists none)',
    );
    expect(none.stdout).toMatch(/fix: Set GATEWAY_SEARCH_MODEL \(e\.g\. tavily\), or add such a model/);
    expect(lineFor(none.stdout, /Web fetch/)).toMatch(/^✗ /);

    service.setWebModels(null);
    const missing = await doctor({ GATEWAY_API_KEY: SECRET });
    expect(lineFor(missing.stdout, /Web search/)).toMatch(
      /no model \(the gateway has no \/v1\/models\/web \(404\)\)/,
    );

    const configured = await doctor({
      GATEWAY_API_KEY: SECRET,
      GATEWAY_SEARCH_MODEL: 'tavily',
      GATEWAY_FETCH_MODEL: 'jina-reader/fetch',
    });
    expect(configured.code).toBe(0);
    expect(lineFor(configured.stdout, /Web fetch/)).toBe(
      '✓ Web fetch (web_fetch): jina-reader (from GATEWAY_FETCH_MODEL)',
    );
  });

  it('warns, but passes, for optional gaps and configured models the gateway does not list', async () => {
    service.setModelList('tts', null);
    const run = await doctor({ GATEWAY_API_KEY: SECRET, GATEWAY_TRANSCRIBE_MODEL: 'acme/listen-9' });
    expect(run.code).toBe(0);
    expect(lineFor(run.stdout, /Speech/)).toMatch(
      /^! .*no model \(the gateway has no \/v1\/models\/tts \(404\)\)/,
    );
    expect(lineFor(run.stdout, /Transcription/)).toMatch(
      /^! .*acme\/listen-9 \(from GATEWAY_TRANSCRIBE_MODEL\), but \/v1\/models\/stt does not list it/,
    );
    expect(run.stdout).toMatch(/Ready: every required check passed \(3 warnings\)\./);
  });

  it('reads a configured speech model as provider/model or provider/model/voice', async () => {
    const line = async (model: string) =>
      lineFor((await doctor({ GATEWAY_API_KEY: SECRET, GATEWAY_SPEECH_MODEL: model })).stdout, /Speech/);
    expect(await line('openai/tts-1-hd/nova')).toBe(
      '✓ Speech (audio_speech): openai/tts-1-hd/nova (from GATEWAY_SPEECH_MODEL)',
    );
    expect(await line('openai/gpt-4o-mini-tts')).toBe(
      '✓ Speech (audio_speech): openai/gpt-4o-mini-tts with voice alloy, sent as openai/gpt-4o-mini-tts/alloy (from GATEWAY_SPEECH_MODEL)',
    );
    expect(await line('selfhosted-tts/kokoro')).toBe(
      "✓ Speech (audio_speech): selfhosted-tts/kokoro with selfhosted-tts's own default voice (from GATEWAY_SPEECH_MODEL)",
    );
    const chat = await doctor({ GATEWAY_API_KEY: SECRET, GATEWAY_SPEECH_MODEL: 'openai/gpt-4o-mini/alloy' });
    expect(lineFor(chat.stdout, /Speech/)).toBe(
      '! Speech (audio_speech): openai/gpt-4o-mini/alloy (from GATEWAY_SPEECH_MODEL), but /v1/models/tts does not list it',
    );
    expect(chat.stdout).toMatch(
      /fix: audio_speech refuses it without `model`: set GATEWAY_SPEECH_MODEL to a listed provider\/model/,
    );
    expect(service.counters.speech ?? 0).toBe(0);
  });

  it('falls back to /v1/models when the gateway has no /api/health', async () => {
    service.inject('health', { status: 404 });
    const run = await doctor({ GATEWAY_API_KEY: SECRET });
    expect(run.code).toBe(0);
    expect(lineFor(run.stdout, /Service reachable/)).toMatch(
      /it has no \/api\/health; \/v1\/models answered/,
    );
  });

  it('hides credentials embedded in the base URL', async () => {
    const url = service.url.replace('http://', 'http://admin:hunter2-pass@');
    const run = await doctor({ GATEWAY_API_KEY: SECRET, GATEWAY_BASE_URL: url });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('hunter2-pass');
    expect(run.stdout).toContain('http://***@127.0.0.1:');
  });

  it('fails when the output directory cannot be written', async () => {
    const cwd = tempDir('gtm-doctor-');
    writeFileSync(join(cwd, 'a-file'), 'x');
    const run = await doctor({ GATEWAY_API_KEY: SECRET, CWD: cwd, GATEWAY_OUTPUT_DIR: 'a-file/out' });
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /Output directory/)).toMatch(
      /^✗ .*cannot be created: .*a-file is not a directory/,
    );
    expect(run.stdout).toMatch(/fix: Set GATEWAY_OUTPUT_DIR/);
    expect(readdirSync(cwd)).toEqual(['a-file']);
  });
});
