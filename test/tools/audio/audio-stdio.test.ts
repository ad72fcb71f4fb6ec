import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, structuredOf, tempDir, textOf } from '../../harness/harness.js';
import {
  type ReferenceService,
  startReferenceService,
  synthesizeAudio,
} from '../../reference-service/index.js';

const SECRET = 'sk-audio-stdio-secret-123456';
let service: ReferenceService;

beforeAll(async () => {
  service = await startReferenceService({ apiKey: SECRET });
});
afterAll(() => service.close());

describe('audio tools in the built server over stdio', () => {
  it('speaks into the output directory, then transcribes that file', async () => {
    const cwd = tempDir('gtm-audio-stdio-');
    const spawned = await connectStdio({ GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: SECRET, CWD: cwd });
    try {
      const { tools } = await spawned.client.listTools();
      const speech = tools.find((t) => t.name === 'audio_speech');
      const transcribe = tools.find((t) => t.name === 'audio_transcribe');
      expect(speech?._meta?.['gateway-tools/required']).toBeUndefined();
      expect(speech?.outputSchema?.properties).toHaveProperty('file_path');
      expect(transcribe?.inputSchema.properties).toHaveProperty('data_base64');

      const spoken = await spawned.client.callTool({
        name: 'audio_speech',
        arguments: { text: 'Over stdio', model: 'openai/tts-1', voice: 'nova' },
      });
      expect(spoken.isError).toBeFalsy();
      const out = structuredOf<{ file_path: string; model: string }>(spoken);
      expect(out.model).toBe('openai/tts-1/nova');
      expect(dirname(out.file_path)).toBe(join(cwd, 'gateway-output'));
      expect(readFileSync(out.file_path).equals(synthesizeAudio('Over stdio', 'mp3'))).toBe(true);

      const heard = await spawned.client.callTool({
        name: 'audio_transcribe',
        arguments: { file_path: relative(cwd, out.file_path), response_format: 'vtt' },
      });
      expect(heard.isError).toBeFalsy();
      const transcript = structuredOf<{ text: string; file_path: string; format: string }>(heard);
      expect(transcript.format).toBe('vtt');
      expect(transcript.text).toMatch(/^Transcript of speech-nova-.*\.mp3/);
      expect(existsSync(transcript.file_path)).toBe(true);

      const refused = await spawned.client.callTool({
        name: 'audio_transcribe',
        arguments: { file_path: relative(cwd, out.file_path), model: 'openai/tts-1/nova' },
      });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain('not a transcription model');
      expect(service.counters.transcriptions).toBe(1);
      expect(spawned.stderr()).not.toContain(SECRET);
    } finally {
      await spawned.close();
    }
  });
});
