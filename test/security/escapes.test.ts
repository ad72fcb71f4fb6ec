import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../harness/gateway.js';
import { tempDir, textOf } from '../harness/harness.js';
import { synthesizeAudio } from '../reference-service/index.js';

// A gateway's strings reach a person (a terminal, through doctor or a client's log) and a model.
// Escape sequences and control characters in them could forge lines, retitle the terminal or
// hide text: none may pass, in any tool's text or structured content. Lines and tabs stay.

const cwd = tempDir('gtm-escapes-');
const gw = useGateway({ env: { CWD: cwd } });

const call = (name: string, args: Record<string, unknown>) =>
  gw.conn.client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/** Everything a client receives from a result, as one string with its escapes undone. */
const received = (result: CallToolResult) =>
  textOf(result) +
  JSON.stringify(result.structuredContent ?? {}).replace(/\\u([0-9a-f]{4})/gi, (_, h) =>
    String.fromCharCode(Number.parseInt(h, 16)),
  );

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point
const UNSHOWN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const FORGED = '\u001b[2K\r\u001b[32m✓ all checks passed\u001b[0m';
const TITLE = '\u001b]0;pwned\u0007';
const REVERSED = 'abc\u202etxt.exe';

describe('escape sequences and control characters from the gateway', () => {
  it('search: titles, snippets and the answer reach the agent without them', async () => {
    gw.service.inject('search', {
      body: JSON.stringify({
        provider: 'tavily',
        query: 'q',
        answer: `answer ${FORGED}`,
        results: [
          { title: `title ${TITLE}${FORGED}`, url: 'https://example.com/', snippet: `snip ${REVERSED}` },
        ],
      }),
    });
    const result = await call('web_search', { query: 'q', provider: 'tavily' });
    expect(result.isError).toBeFalsy();
    expect(received(result)).not.toMatch(UNSHOWN);
    expect(textOf(result)).toContain('title ✓ all checks passed');
    expect(textOf(result)).toContain('snip abctxt.exe');
  });

  it('fetch: a page loses its escapes and keeps its lines and tabs', async () => {
    gw.service.inject('fetch', {
      body: JSON.stringify({
        provider: 'jina-reader',
        url: 'https://example.com/log',
        title: `Log ${TITLE}`,
        content: {
          format: 'markdown',
          text: `line one\u001b[31m red\u001b[0m\r\nline two\tcolumn\n${FORGED}`,
        },
      }),
    });
    const result = await call('web_fetch', { url: 'https://example.com/log', provider: 'jina-reader' });
    expect(result.isError).toBeFalsy();
    expect(received(result)).not.toMatch(UNSHOWN);
    expect(textOf(result)).toContain('line one red\nline two\tcolumn\n✓ all checks passed');
  });

  it('errors: a refusal with escapes is told without them', async () => {
    gw.service.inject('search', { status: 400, message: `bad query ${TITLE}${FORGED}` });
    const result = await call('web_search', { query: 'q', provider: 'tavily' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('bad query');
    expect(received(result)).not.toMatch(UNSHOWN);
  });

  it('video: a failure reason and a status word lose them', async () => {
    const submitted = await call('video_generate', { prompt: 'p', wait_seconds: 0 });
    const jobId = (submitted.structuredContent as { job_id: string }).job_id;
    gw.service.inject('videos.poll', {
      body: JSON.stringify({
        status: 'failed',
        error: { message: `moderated ${FORGED}`, code: `c${TITLE}` },
      }),
    });
    const result = await call('video_status', { job_id: jobId, wait_seconds: 0 });
    expect(textOf(result)).toContain('moderated');
    expect(received(result)).not.toMatch(UNSHOWN);
  });

  it('ask_model: an answer, streamed or whole, loses them', async () => {
    const streamed = [
      `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'one \u001b[2' })}\n\n`,
      `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: `K\rtwo ${REVERSED}` })}\n\n`,
      `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: { status: 'completed', model: `m${TITLE}` } })}\n\n`,
    ].join('');
    gw.service.inject('responses', { body: streamed });
    const first = await call('ask_model', { prompt: 'hi', model: 'openai/gpt-4o-mini' });
    expect(first.isError).toBeFalsy();
    expect(received(first)).not.toMatch(UNSHOWN);
    expect(textOf(first)).toContain('one two abctxt.exe');

    gw.service.inject('responses', {
      body: JSON.stringify({ status: 'completed', model: 'm', output_text: `whole ${FORGED}` }),
    });
    const second = await call('ask_model', { prompt: 'hi', model: 'openai/gpt-4o-mini' });
    expect(second.isError).toBeFalsy();
    expect(received(second)).not.toMatch(UNSHOWN);
    expect(textOf(second)).toContain('whole ✓ all checks passed');
  });

  it('audio_transcribe: a transcript loses them', async () => {
    writeFileSync(join(cwd, 'clip.mp3'), synthesizeAudio('hello', 'mp3'));
    gw.service.inject('transcriptions', { body: JSON.stringify({ text: `said ${FORGED} ${REVERSED}` }) });
    const result = await call('audio_transcribe', { file_path: 'clip.mp3' });
    expect(result.isError).toBeFalsy();
    expect(received(result)).not.toMatch(UNSHOWN);
    expect(textOf(result)).toContain('said ✓ all checks passed abctxt.exe');
  });
});
