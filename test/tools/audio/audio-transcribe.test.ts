// audio_transcribe on the reference service alone: a provider that ignores the format, a gateway
// without a transcription list, and the request the gateway itself receives. The cases 9router
// produces too run on both gateways in audio-transcribe.real.test.ts.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../../harness/gateway.js';
import { type Connected, structuredOf, tempDir, textOf } from '../../harness/harness.js';
import { type RecordedFile, synthesizeAudio } from '../../reference-service/index.js';

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
  it('names the upload by what its bytes are where the name does not say it is audio', async () => {
    const lastUpload = () =>
      gw.service.requests.filter((r) => r.route === 'transcriptions').at(-1)?.body as { file: RecordedFile };
    const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const filler = (seed: string) => createHash('sha512').update(seed).digest();
    const aiff = Buffer.concat([Buffer.from('FORM\0\0\x01\0AIFFCOMM', 'latin1'), filler('aiff')]);
    const caf = Buffer.concat([Buffer.from('caff\0\x01\0\0desc', 'latin1'), filler('caf')]);
    const ebml = Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), filler('mkv')]);
    const cases: [string, Buffer, string, string][] = [
      ['take', aiff, 'take.aiff', 'audio/aiff'],
      ['take.bin', caf, 'take.bin.caf', 'audio/x-caf'],
      ['named.aiff', aiff, 'named.aiff', 'audio/aiff'],
      ['film.mkv', ebml, 'film.mkv.webm', 'audio/webm'],
      // A name that says audio is kept: a tag (ID3) can hide FLAC or AAC from the first bytes.
      ['tagged.flac', synthesizeAudio('tagged', 'mp3'), 'tagged.flac', 'audio/mpeg'],
    ];
    for (const [name, bytes, sent, type] of cases) {
      writeFileSync(join(cwd, name), bytes);
      const result = await call({ file_path: name });
      expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
      expect(lastUpload().file, name).toMatchObject({ name: sent, type, sha256: sha256(bytes) });
    }
    // The whole head is read for inline data too: a transport stream shows itself at byte 188.
    const ts = Buffer.alloc(400, 0x22);
    ts[0] = 0x47;
    ts[188] = 0x47;
    const inline = await call({ data_base64: ts.toString('base64') });
    expect(inline.isError, textOf(inline)).toBeFalsy();
    expect(lastUpload().file).toMatchObject({ name: 'audio.ts', type: 'video/mp2t', sha256: sha256(ts) });
  });
});
