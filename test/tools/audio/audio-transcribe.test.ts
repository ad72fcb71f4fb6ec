// audio_transcribe on the reference service alone: a provider that ignores the format, a gateway
// without a transcription list, and the request the gateway itself receives. The cases 9router
// produces too run on both gateways in audio-transcribe.real.test.ts.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { type Connected, structuredOf, tempDir, textOf } from '../../harness/harness.js';
import { synthesizeAudio } from '../../reference-service/index.js';

interface TranscriptOut {
  text: string;
  model: string;
  format: string;
  file_path: string | null;
}

function transcribe(target: Connected, args: Record<string, unknown>) {
  return target.client.callTool({ name: 'audio_transcribe', arguments: args }) as Promise<CallToolResult>;
}

describe('audio_transcribe on the reference service only', () => {
  let cwd: string;
  const SAMPLE = synthesizeAudio('sample', 'mp3');
  const gw = useGateway({
    env: () => {
      cwd = tempDir('gtm-stt-');
      writeFileSync(join(cwd, 'sample.mp3'), SAMPLE);
      return { CWD: cwd };
    },
  });
  const call = (args: Record<string, unknown>) => transcribe(gw.conn, args);

  it('sends the upload as multipart/form-data', async () => {
    const result = await call({ file_path: 'sample.mp3' });
    expect(result.isError, textOf(result)).toBeFalsy();
    const upload = gw.service.requests.find((r) => r.route === 'transcriptions');
    expect(upload?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
  });

  it('says so when the provider ignores the requested format', async () => {
    const result = await call({ file_path: 'sample.mp3', model: 'deepgram/nova-3', response_format: 'srt' });
    const out = structuredOf<TranscriptOut>(result);
    expect(out).toMatchObject({ format: 'json', file_path: null });
    expect(textOf(result)).toContain('Asked for srt, but the provider answered json');
  });

  it('goes through unchecked when the gateway has no transcription list, and reports its own error', async () => {
    gw.service.setModelList('stt', null);
    const ok = await call({ file_path: 'sample.mp3', model: 'openai/whisper-1' });
    expect(ok.isError).toBeFalsy();
    const bad = await call({ file_path: 'sample.mp3', model: 'elevenlabs/scribe' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toContain("Provider 'elevenlabs' does not support STT");
    expect(textOf(bad)).toContain('could not be checked first');
    expect(gw.service.counters.transcriptions).toBe(2);
    const noDefault = await call({ file_path: 'sample.mp3' });
    expect(textOf(noDefault)).toMatch(/No transcription model to use.*GATEWAY_TRANSCRIBE_MODEL/);
  });
});
