import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectEra, type EraClient } from '../../harness/eras.js';
import { type Fleet, startFleet } from '../../harness/fleet.js';
import { useReferenceService } from '../../harness/gateway.js';
import { HAPROXY, HAPROXY_MISSING } from '../../harness/haproxy.js';
import { textOf } from '../../harness/harness.js';
import { HAS_POSTGRES, POSTGRES_MISSING } from '../../harness/postgres.js';
import { submitsOf } from '../../harness/video.js';

// Three replicas sharing one PostgreSQL and one output folder, behind HAProxy: 2026-07-28
// requests go round-robin, a 2025-era session stays on the replica that opened it, and so does a
// legacy SSE session. The replicas share a token and confirm videos, as a team would run them.
const reference = useReferenceService();
const runnable = HAS_POSTGRES && HAPROXY !== undefined;
if (!runnable) console.warn(HAS_POSTGRES ? HAPROXY_MISSING : POSTGRES_MISSING);

const TOKEN = 'fleet-token-0123456789abcdef';
const VIDEO = { prompt: 'a paper boat in the rain', duration: 6, aspect_ratio: '16:9', wait_seconds: 0 };

describe.runIf(runnable)('replicas behind a load balancer', () => {
  let fleet: Fleet;
  const clients: EraClient[] = [];
  beforeAll(async () => {
    fleet = await startFleet({ ...reference.env, GATEWAY_MCP_TOKEN: TOKEN, GATEWAY_CONFIRM: 'video' });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await fleet?.stop();
  });
  const connect = async (...args: Parameters<typeof connectEra>) => {
    const client = await connectEra(...args);
    clients.push(client);
    return client;
  };
  const reach = (kind?: 'streamable' | 'sse') => ({
    http: fleet.url,
    token: TOKEN,
    ...(kind ? { kind } : {}),
  });

  it('spreads 2026-07-28 calls over the replicas', async () => {
    const client = await connect('2026-07-28', reach());
    for (let i = 0; i < 6; i++) {
      const result = await client.callTool('web_search', { query: `spread ${i}` });
      expect(result.isError, textOf(result)).toBeFalsy();
    }
    expect(new Set(fleet.haproxy.servedBy('/mcp')).size).toBe(3);
  });

  it.each(['streamable', 'sse'] as const)(
    'keeps a 2025-era session (%s) on the replica that opened it',
    async (kind) => {
      const client = await connect('2025-era', reach(kind));
      for (let i = 0; i < 6; i++) {
        const result = await client.callTool('web_search', { query: `${kind} sticky ${i}` });
        expect(result.isError, textOf(result)).toBeFalsy();
      }
    },
  );

  // The duplicate guard is off (allow_duplicate), so only the record of the used confirmation
  // stands between a replayed answer and a second video.
  describe('an accepted confirmation sent again to other replicas', () => {
    const post = async (replica: number, id: number, params: Record<string, unknown>) => {
      const res = await fetch(new URL('/mcp', fleet.replicas[replica]?.url), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${TOKEN}`,
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': 'video_generate',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: {
            ...params,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
            },
          },
        }),
      });
      const text = await res.text();
      const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? text);
      return JSON.parse(json) as { result?: Record<string, unknown>; error?: unknown };
    };
    /** Round 1 on replica 0: the state and the accepted answer to send as round 2. */
    const accepted = async (prompt: string) => {
      const call = { name: 'video_generate', arguments: { ...VIDEO, prompt, allow_duplicate: true } };
      const first = await post(0, 1, call);
      expect(first.result, JSON.stringify(first)).toMatchObject({ resultType: 'input_required' });
      const { requestState } = first.result as { requestState: string };
      return { ...call, requestState, inputResponses: { confirm: { action: 'accept', content: {} } } };
    };

    it('is sent once: to replica A, then the same to replica B', async () => {
      const round2 = await accepted('replayed on another replica');
      const before = submitsOf(reference.service).length;
      const sent = await post(0, 2, round2);
      expect(sent.result?.isError, JSON.stringify(sent)).toBeFalsy();
      const again = await post(1, 3, round2);
      expect(JSON.stringify(again)).toContain('the confirmation the client sent was already used');
      expect(submitsOf(reference.service)).toHaveLength(before + 1);
    });

    it('is sent once: to three replicas at the same moment', async () => {
      const round2 = await accepted('replayed on three replicas at once');
      const before = submitsOf(reference.service).length;
      const answers = await Promise.all([0, 1, 2].map((replica) => post(replica, 10 + replica, round2)));
      expect(submitsOf(reference.service)).toHaveLength(before + 1);
      const refused = answers.filter((a) => JSON.stringify(a).includes('already used'));
      expect(refused, JSON.stringify(answers)).toHaveLength(2);
    });
  });

  describe('what one replica paid for, the others take', () => {
    const on = (replica: number) =>
      connect('2026-07-28', { http: fleet.replicas[replica]?.url ?? '', token: TOKEN });
    const fetches = (url: string) =>
      reference.service.requests.filter((r) => r.route === 'fetch' && JSON.stringify(r.body).includes(url));

    it('serves the second part of a page on another replica from the shared cache', async () => {
      const url = 'https://example.com/long/paged-across-replicas';
      const [a, b] = [await on(0), await on(1)];
      const first = await a.callTool('web_fetch', { url, max_length: 2000 });
      expect(first.isError, textOf(first)).toBeFalsy();
      const next = (first.structuredContent as { next_start_index: number }).next_start_index;
      const second = await b.callTool('web_fetch', { url, start_index: next, max_length: 2000 });
      expect(second.isError, textOf(second)).toBeFalsy();
      expect(second.structuredContent).toMatchObject({ start_index: next });
      expect(textOf(second)).toContain('Line 0');
      expect(fetches(url)).toHaveLength(1);
    });

    it('fetches a page asked of three replicas at the same moment once', async () => {
      const url = 'https://example.com/long/asked-of-three-at-once';
      const clients = await Promise.all([0, 1, 2].map(on));
      const results = await Promise.all(
        clients.map((c) => c.callTool('web_fetch', { url, max_length: 1000 })),
      );
      for (const result of results) expect(result.isError, textOf(result)).toBeFalsy();
      expect(fetches(url)).toHaveLength(1);
    });

    it('transcribes the same audio once, whichever replica is asked', async () => {
      const audio = Buffer.alloc(400, 0x23);
      audio[0] = 0x47;
      audio[188] = 0x47;
      const uploads = () => reference.service.requests.filter((r) => r.route === 'transcriptions').length;
      const before = uploads();
      const [a, b] = [await on(0), await on(2)];
      const first = await a.callTool('audio_transcribe', { data_base64: audio.toString('base64') });
      expect(first.isError, textOf(first)).toBeFalsy();
      const again = await b.callTool('audio_transcribe', { data_base64: audio.toString('base64') });
      expect(again.isError, textOf(again)).toBeFalsy();
      expect(textOf(again)).toContain('from cache');
      expect(again.structuredContent).toEqual(first.structuredContent);
      expect(uploads()).toBe(before + 1);
    });
  });
});
