import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Connected, connectInMemory, tempDir, textOf } from '../harness/harness.js';
import { type ReferenceService, startReferenceService } from '../reference-service/index.js';

// A download's connection failure names the connection's error code, carried from the socket
// error to the sentence as data (ServiceError.code), whichever host failed.
describe('a download host that refuses the connection', () => {
  let gateway: ReferenceService;
  let gone: string;
  let conn: Connected;
  beforeAll(async () => {
    gateway = await startReferenceService();
    const closed = await startReferenceService();
    gone = closed.url;
    await closed.close();
    conn = await connectInMemory({
      GATEWAY_BASE_URL: gateway.url,
      GATEWAY_API_KEY: gateway.apiKey,
      GATEWAY_ALLOW_PRIVATE_URLS: new URL(gone).host,
      GATEWAY_MAX_RETRIES: '0',
      CWD: tempDir('gtm-download-errors-'),
    });
  });
  afterAll(async () => {
    await conn.close();
    await gateway.close();
  });

  it('is named with its code when audio_transcribe downloads from it', async () => {
    const url = `${gone}/talk.mp3`;
    const result = await conn.client.callTool({ name: 'audio_transcribe', arguments: { url } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `Could not download ${url}: the connection failed (ECONNREFUSED). Check that the URL is reachable without a login, or save the file under the input roots and pass file_path.`,
    );
    expect(gateway.counters.transcriptions).toBe(0);
  });
});
