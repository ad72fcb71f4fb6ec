// What clients ask of the server beyond tools, end to end against 9router 0.5.69: a saved file
// read back through the protocol by a client elsewhere (resources), and a billed submit the user
// declines never reaching the provider (GATEWAY_CONFIRM with elicitation).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ResourceLink,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { connectInMemory, tempDir, textOf } from '../../harness/harness.js';
import { connectHttp, disconnect, startHttpCli } from '../../harness/http-harness.js';
import { unique, useRealGateway } from '../../nine-router/use.js';

const gw = useRealGateway();

describe('saved files through the protocol', () => {
  it('a client reads the speech the server saved, over Streamable HTTP, from the bytes the provider sent', async () => {
    const server = await startHttpCli({ ...gw.env, CWD: tempDir('gtm-real-res-') });
    try {
      const client = await connectHttp(server.url, 'streamable');
      const text = unique('read-back');
      const result = (await client.callTool({
        name: 'audio_speech',
        arguments: { text, model: 'openai/tts-1', voice: 'nova' },
      })) as CallToolResult;
      expect(result.isError, textOf(result)).toBeFalsy();
      const link = result.content.find((c): c is ResourceLink => c.type === 'resource_link');
      expect(link?.uri).toMatch(/^gateway-tools:\/\/output\/speech-nova-[\d-]+\.mp3$/);
      const [content] = (await client.readResource({ uri: link?.uri as string })).contents;
      const bytes = Buffer.from((content as { blob: string }).blob, 'base64');
      // The fake speech upstream writes what it was asked after the format's magic bytes.
      expect(bytes.toString('latin1')).toContain(`SPEECH model=tts-1 voice=nova text=${text}`);
      const sent = (await gw.upstream('api.openai.com')).filter((e) => e.path.endsWith('/audio/speech'));
      expect(sent).toHaveLength(1);
      await disconnect(client);
    } finally {
      await server.stop();
    }
  });
});

describe('confirm before spending', () => {
  it('sends nothing to the provider when the user declines a video, and one submit when they accept', async () => {
    let answer: 'decline' | 'accept' = 'decline';
    const client = new Client(
      { name: 'asking', version: '1' },
      { capabilities: { elicitation: { form: {} } } },
    );
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return answer === 'accept' ? { action: 'accept', content: {} } : { action: 'decline' };
    });
    const conn = await connectInMemory({ ...gw.env, GATEWAY_CONFIRM: 'video' }, [], client);
    try {
      const prompt = unique('confirm-kite');
      const call = () =>
        client.callTool({
          name: 'video_generate',
          arguments: { prompt, duration: 6, wait_seconds: 0 },
        }) as Promise<CallToolResult>;
      const declined = await call();
      expect(textOf(declined)).toMatch(
        /^The user declined: Generate a video with xai\/grok-imagine-video was not sent/,
      );
      expect(await gw.upstream('api.x.ai')).toEqual([]);
      answer = 'accept';
      const accepted = await call();
      expect(accepted.isError, textOf(accepted)).toBeFalsy();
      const submits = (await gw.upstream('api.x.ai')).filter((e) => e.method === 'POST');
      expect(submits).toHaveLength(1);
      expect(submits[0]?.body).toMatchObject({ prompt });
      expect(asked).toHaveLength(2);
      expect(asked[0]).toContain(`Prompt: ${prompt}`);
    } finally {
      await conn.close();
    }
  });
});
