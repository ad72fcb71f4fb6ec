// What the agent is told when the real gateway answers with an error: an upstream provider's
// failure names that provider's account (never GATEWAY_API_KEY), our own refused key names
// GATEWAY_API_KEY, and a cooldown is reported with its wait. Retry-After is honoured once when it
// is short, and a long one is reported at once. The journal shows what reached the upstreams.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { decodeJobHandle, encodeJobHandle } from '../../src/tools/video/job-handle.js';
import { connectInMemory, structuredOf, textOf } from '../harness/harness.js';
import { unique, useRealGateway } from '../nine-router/use.js';

const gw = useRealGateway();

async function call(name: string, args: Record<string, unknown>) {
  const started = Date.now();
  const result = (await gw.conn.client.callTool({ name, arguments: args })) as CallToolResult;
  return { result, text: textOf(result), ms: Date.now() - started };
}

/** Bytes the transcription tool takes for audio (an MPEG frame header), carrying the fake's words. */
function fakeAudio(words: string): string {
  const head = Buffer.from([0xff, 0xfb, 0x90, 0x00, ...Buffer.alloc(60)]);
  return Buffer.concat([head, Buffer.from(`SPOKEN: ${words}`)]).toString('base64');
}

/** Asks the gateway directly (a test's set-up, not a tool call). */
function gatewaySearch(provider: string, query: string) {
  return fetch(`${gw.info.url}/v1/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.info.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: provider, query }),
  });
}

const COOLING = (subject: string) => new RegExp(`${subject} is cooling down for (\\d+) s`);

describe('an upstream provider refusing its account is that provider’s problem', () => {
  const cases: {
    label: string;
    tool: string;
    args: () => Record<string, unknown>;
    host: string;
    names: RegExp;
  }[] = [
    {
      label: 'search via exa, 401',
      tool: 'web_search',
      args: () => ({ query: `${unique('exa')} fault-401`, provider: 'exa' }),
      host: 'api.exa.ai',
      names: /exa refused the gateway's exa account/,
    },
    {
      label: 'search via tavily, 403',
      tool: 'web_search',
      args: () => ({ query: `${unique('tavily')} fault-403`, provider: 'tavily' }),
      host: 'api.tavily.com',
      names: /tavily refused the gateway's tavily account \(permission or quota\)/,
    },
    {
      label: 'fetch via jina-reader, 401',
      tool: 'web_fetch',
      args: () => ({ url: `https://example.com/${unique('jina')}/fault-401`, provider: 'jina-reader' }),
      host: 'r.jina.ai',
      names: /jina-reader refused the gateway's jina-reader account/,
    },
    {
      label: 'transcription via groq, 401',
      tool: 'audio_transcribe',
      args: () => ({ data_base64: fakeAudio(`${unique('stt')} fault-401`), model: 'groq/whisper-large-v3' }),
      host: 'api.groq.com',
      names: /groq refused the gateway's groq account/,
    },
    {
      label: 'chat provider node via ask_model, 401 (the gateway answers 503)',
      tool: 'ask_model',
      args: () => ({ prompt: `${unique('chat')} fault-401`, model: 'fakechat/m-401' }),
      host: 'local',
      names: /fakechat refused the gateway's fakechat account.*HTTP 503.*fakechat\/m-401 is cooling down/,
    },
    {
      label: 'Responses provider node via ask_model, 403 (the gateway answers 503)',
      tool: 'ask_model',
      args: () => ({ prompt: `${unique('resp')} fault-403`, model: 'fakeresp/m-403' }),
      host: 'local',
      names: /fakeresp refused the gateway's fakeresp account/,
    },
    {
      label: 'speech, 401 (the gateway answers 502)',
      tool: 'audio_speech',
      args: () => ({ text: `${unique('tts')} fault-401`, model: 'selfhosted-tts/kokoro' }),
      host: 'local',
      names: /selfhosted-tts refused the gateway's selfhosted-tts account.*HTTP 502/,
    },
  ];
  for (const c of cases) {
    it(c.label, async () => {
      const { result, text } = await call(c.tool, c.args());
      expect(result.isError, text).toBe(true);
      expect(text).toMatch(c.names);
      expect(text).not.toMatch(/GATEWAY_API_KEY/);
      expect(text).toMatch(/in the gateway's dashboard/);
      // The account is now locked, and the agent is told for how long.
      expect(text).toMatch(/is cooling down for \d+ s in the gateway/);
      // Sent once: a refused account is not retried.
      const reached = (await gw.upstream(c.host)).filter((e) => !e.path.endsWith('/models'));
      expect(reached).toHaveLength(1);
      expect(reached[0]?.status).toBeGreaterThanOrEqual(401);
    });
  }
});

describe('the gateway refusing our own key', () => {
  for (const [label, key, said] of [
    ['a wrong key', 'sk-wrong-0123456789', /Invalid API key/],
    ['no key', '', /Missing API key/],
  ] as const) {
    it(`${label}: names GATEWAY_API_KEY, and no provider is asked`, async () => {
      const env = { ...gw.env, GATEWAY_API_KEY: key };
      const conn = await connectInMemory(env);
      try {
        const result = await conn.client.callTool({
          name: 'web_search',
          arguments: { query: unique('our-key'), provider: 'tavily' },
        });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(said);
        expect(textOf(result)).toMatch(/HTTP 401.*Set GATEWAY_API_KEY/);
      } finally {
        await conn.close();
      }
      expect(await gw.upstream()).toEqual([]);
    });
  }
});

describe('cooldowns are reported with their wait', () => {
  it('after a 401 the provider is cooling down: said at once, and the provider is not asked', async () => {
    await call('web_search', { query: `${unique('lock')} fault-401`, provider: 'exa' });
    const clean = unique('clean');
    const { result, text, ms } = await call('web_search', { query: clean, provider: 'exa' });
    expect(result.isError).toBe(true);
    const wait = Number(COOLING('exa').exec(text)?.[1]);
    expect(wait).toBeGreaterThan(60);
    expect(wait).toBeLessThanOrEqual(120);
    expect(text).not.toMatch(/GATEWAY_API_KEY/);
    expect(ms).toBeLessThan(5_000);
    const reached = await gw.upstream('api.exa.ai');
    expect(reached).toHaveLength(1);
    expect(JSON.stringify(reached)).not.toContain(clean);
  });

  it('a long Retry-After (a 500 locks for 30 s) is reported at once, not waited for', async () => {
    const first = await call('web_search', { query: `${unique('boom')} fault-500`, provider: 'brave' });
    expect(first.text).toMatch(/brave-search failed .*HTTP 500\)\. brave-search is cooling down for \d+ s/);
    const clean = unique('clean');
    const { result, text, ms } = await call('web_search', { query: clean, provider: 'brave' });
    expect(result.isError).toBe(true);
    expect(Number(COOLING('brave-search').exec(text)?.[1])).toBeGreaterThan(10);
    expect(text).toMatch(/retry after \d+ s/);
    expect(ms).toBeLessThan(5_000);
    // Neither call was retried, and the clean one never reached brave.
    expect(await gw.upstream('api.search.brave.com')).toHaveLength(1);
  });

  it('a 429 is retried once after its short wait, then reported; a clean call waits the cooldown out', async () => {
    // Start from the first step of the gateway's exponential 429 cooldown: lifting a cooldown in
    // force resets it (an earlier test may have left serper's raised).
    await gatewaySearch('serper', `${unique('prime')} fault-429`);
    await gw.clearCooldowns();
    const since = (await gw.upstream('google.serper.dev')).length;

    const limited = `${unique('limited')} fault-429`;
    const first = await call('web_search', { query: limited, provider: 'serper' });
    expect(first.result.isError).toBe(true);
    expect(first.text).toMatch(/serper is rate limiting the gateway's serper account/);
    expect(first.text).toMatch(COOLING('serper'));
    expect(first.text).not.toMatch(/GATEWAY_API_KEY/);
    // Once after the wait the gateway named, not again into the longer cooldown that followed.
    const tries = (await gw.upstream('google.serper.dev')).slice(since);
    expect(tries.map((e) => e.status)).toEqual([429, 429]);
    expect(first.ms).toBeLessThan(5_000);

    const clean = unique('clean');
    const second = await call('web_search', { query: clean, provider: 'serper' });
    expect(second.result.isError, second.text).toBeFalsy();
    expect(structuredOf<{ provider: string }>(second.result).provider).toBe('serper');
    expect(second.ms).toBeGreaterThanOrEqual(1_000);
    const cleanSent = (await gw.upstream('google.serper.dev')).filter((e) =>
      JSON.stringify(e.body).includes(clean),
    );
    expect(cleanSent).toHaveLength(1);
  });
});

describe('video: a 404 poll locks the whole xai account', () => {
  it('another job’s poll is told xai may be cooling down, and a submit meanwhile is refused unbilled', async () => {
    const started = await call('video_generate', { prompt: `${unique('job')} polls-5`, wait_seconds: 0 });
    expect(started.result.isError, started.text).toBeFalsy();
    const jobId = structuredOf<{ job_id: string }>(started.result).job_id;
    const { connectionId } = decodeJobHandle(jobId);
    const forged = encodeJobHandle({ requestId: unique('no-such-request'), connectionId });

    const unknown = await call('video_status', { job_id: forged, wait_seconds: 0 });
    expect(unknown.result.isError).toBe(true);
    expect(unknown.text).toMatch(/does not know this job/);

    const other = await call('video_status', { job_id: jobId, wait_seconds: 0 });
    expect(other.result.isError).toBe(true);
    expect(other.text).toMatch(/No credentials for provider: xai/);
    // Either is possible, and the answer alone cannot tell which: both are said, with what to do.
    expect(other.text).toMatch(/xai is cooling down after an earlier error/);
    expect(other.text).toMatch(/or the gateway has no xai account/);
    expect(other.text).toMatch(/wait a minute and retry.*The job itself is unaffected/s);

    const submit = await call('video_generate', { prompt: unique('during-lock'), wait_seconds: 0 });
    expect(submit.result.isError).toBe(true);
    expect(submit.text).toMatch(/refused, so no job was started and nothing was billed/);
    expect(submit.text).toMatch(/xai\S* is cooling down for \d+ s in the gateway/);

    // One submit and one poll reached xai; the lock answered the rest.
    const reached = (await gw.upstream('api.x.ai')).map((e) => `${e.method} ${e.status}`);
    expect(reached).toEqual(['POST 200', 'GET 404']);
  });
});
