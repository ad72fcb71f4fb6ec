import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../harness/gateway.js';
import { tempDir, textOf } from '../harness/harness.js';
import { synthesizeAudio } from '../reference-service/index.js';

// Billing beyond video submits (see video-faults.test.ts for those): a transcription is billed per
// upload and an upload stream cannot be replayed, so it is sent once whatever goes wrong; speech is
// retried only on the statuses of free calls, a bounded number of times (a documented trade-off).

const gw = useGateway({
  env: () => {
    const cwd = tempDir('gtm-billing-');
    writeFileSync(join(cwd, 'talk.mp3'), synthesizeAudio('billing', 'mp3'));
    return { GATEWAY_TIMEOUT_MS: '1500', GATEWAY_MAX_RETRIES: '2', CWD: cwd };
  },
});

const call = (name: string, args: Record<string, unknown>) =>
  gw.conn.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

describe('billed calls other than video submits', () => {
  for (const [name, fault] of [
    ['502', { status: 502 }],
    ['503 with a short Retry-After', { status: 503, headers: { 'retry-after': '1' } }],
    ['a connection reset', { reset: true }],
    ['504', { status: 504 }],
  ] as const) {
    it(`a transcription is uploaded once on ${name}`, async () => {
      gw.service.inject('transcriptions', { ...fault, times: 5 });
      const result = await call('audio_transcribe', {
        file_path: 'talk.mp3',
        model: 'groq/whisper-large-v3',
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).not.toMatch(/bug in gateway-tools-mcp/);
      expect(gw.service.counters.transcriptions).toBe(1);
    });
  }

  it('speech is retried on 503 at most GATEWAY_MAX_RETRIES times, never on other errors', async () => {
    gw.service.inject('speech', { status: 503, times: 5 });
    expect((await call('audio_speech', { text: 'hi', model: 'openai/tts-1/alloy' })).isError).toBe(true);
    expect(gw.service.counters.speech).toBe(3);
    gw.service.clearFaults();
    gw.service.resetCounters();
    gw.service.inject('speech', { status: 500, times: 5 });
    expect((await call('audio_speech', { text: 'hi', model: 'openai/tts-1/alloy' })).isError).toBe(true);
    expect(gw.service.counters.speech).toBe(1);
  });

  for (const [name, fault] of [
    ['502', { status: 502 }],
    ['504', { status: 504 }],
    ['a reset', { reset: true }],
    ['a 502 with a short Retry-After', { status: 502, headers: { 'retry-after': '1' } }],
    ['a 500 with a short Retry-After', { status: 500, headers: { 'retry-after': '1' } }],
  ] as const) {
    it(`speech and model answers are sent once on ${name}, which may have reached a paying upstream`, async () => {
      gw.service.inject('speech', { ...fault, times: 5 });
      expect((await call('audio_speech', { text: 'hi', model: 'openai/tts-1/alloy' })).isError).toBe(true);
      expect(gw.service.counters.speech).toBe(1);
      gw.service.inject('responses', { ...fault, times: 5 });
      expect((await call('ask_model', { prompt: 'hi', model: 'openai/gpt-4o-mini' })).isError).toBe(true);
      expect(gw.service.counters.responses).toBe(1);
    });
  }
});
