// Each person's budget through the front door: SDK clients, in memory, against servers of two
// people (GATEWAY_MCP_TOKEN_USER) sharing one ledger and the reference service. Every billed call
// records its person; GATEWAY_LIMITS_PER_USER holds each alone and GATEWAY_LIMITS both together,
// each refusal naming its own; a result past 80 % of a limit says so; a call a limit refuses
// before the person is asked, and one the person declines, is recorded as theirs; `usage` shows
// the caller's own use beside everyone's; GATEWAY_BUDGET_WEBHOOK hears of each 80 % and 100 %
// crossing once, signed, retried, without holding a call up.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useReferenceService } from '../harness/gateway.js';
import { type Connected, connectInMemory, structuredOf, tempDir, textOf } from '../harness/harness.js';
import { until } from '../harness/video.js';
import { sqliteRows } from './ledger-fixture.js';

const reference = useReferenceService();

async function serverOf(person: string, env: Record<string, string>, client?: Client): Promise<Connected> {
  return connectInMemory(
    {
      ...reference.env,
      GATEWAY_SEARCH_MODEL: 'tavily',
      GATEWAY_SPEECH_MODEL: 'openai/tts-1/alloy',
      CWD: tempDir('gtm-budget-'),
      GATEWAY_MCP_TOKEN_USER: person,
      ...env,
    },
    [],
    client,
  );
}

const search = (conn: Connected, query: string) =>
  conn.client.callTool({ name: 'web_search', arguments: { query } }) as Promise<CallToolResult>;

describe('a budget for each person, through the front door', () => {
  it("holds each person to their own limit and both to the team's, warns at 80 %, and usage shows each their own", async () => {
    reference.service.reset();
    const env = {
      GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-'),
      GATEWAY_LIMITS: 'search=3/hour',
      GATEWAY_LIMITS_PER_USER: 'search=2/hour',
    };
    const ana = await serverOf('ana', env);
    const bob = await serverOf('bob', env);
    try {
      const first = await search(ana, 'first');
      expect(first.isError).toBeFalsy();
      expect(textOf(first)).not.toContain('Budget:');
      const second = await search(ana, 'second');
      expect(second.isError).toBeFalsy();
      expect(textOf(second)).toMatch(
        /\n\nBudget: 100 % of your limit search=2\/hour \(GATEWAY_LIMITS_PER_USER\) used, 0 left; more from \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/,
      );
      const third = await search(ana, 'third');
      expect(third.isError).toBe(true);
      expect(textOf(third)).toMatch(
        /^Not sent, and nothing billed: your limit search=2\/hour \(GATEWAY_LIMITS_PER_USER\) is reached, with 2 search calls of yours in the last hour\./,
      );

      // Bob's own budget is untouched, but his first call takes everyone's to 3 of 3.
      const bobs = await search(bob, 'bob first');
      expect(bobs.isError).toBeFalsy();
      expect(textOf(bobs)).toContain(
        'Budget: 100 % of the shared limit search=3/hour (GATEWAY_LIMITS) used, 0 left;',
      );
      // What Claude Code and Codex hand their model when given structured content: that alone.
      expect(structuredOf(bobs)).toMatchObject({
        budget: expect.stringContaining(
          'Budget: 100 % of the shared limit search=3/hour (GATEWAY_LIMITS) used',
        ),
      });
      const refused = await search(bob, 'bob second');
      expect(textOf(refused)).toMatch(
        /^Not sent, and nothing billed: the shared limit search=3\/hour \(GATEWAY_LIMITS\) is reached, with 3 search calls in the last hour, by everyone sharing the ledger\./,
      );
      expect(reference.service.counters.search).toBe(3);

      expect(sqliteRows(env.GATEWAY_LEDGER_DIR).map((r) => [r.words, r.person, r.outcome, r.reason])).toEqual(
        [
          ['first', 'ana', 'accepted', null],
          ['second', 'ana', 'accepted', null],
          ['third', 'ana', 'declined', 'limit search=2/hour per user'],
          ['bob first', 'bob', 'accepted', null],
          ['bob second', 'bob', 'declined', 'limit search=3/hour'],
        ],
      );

      const usage = await ana.client.callTool({ name: 'usage', arguments: {} });
      const data = structuredOf(usage) as {
        periods: Record<string, { calls: Record<string, number> }>;
        you: { person: string; periods: Record<string, { calls: Record<string, number> }> };
        limits: Record<string, unknown>[];
      };
      expect(data.periods.hour?.calls.search).toBe(3);
      expect(data.you.person).toBe('ana');
      expect(data.you.periods.hour?.calls.search).toBe(2);
      expect(data.limits.map(({ next_at: _, ...l }) => l)).toEqual([
        { limit: 'search=3/hour', scope: 'everyone', used: 3, left: 0 },
        { limit: 'search=2/hour', scope: 'you', used: 2, left: 0 },
      ]);
      expect(textOf(usage)).toContain(
        'Yours (ana): last hour 2 search; last 24 h 2 search; this session 2 search.',
      );
      expect(textOf(usage)).toContain('- yours: search=2/hour: 2 used, none left');
      const bobsUsage = structuredOf(
        await bob.client.callTool({ name: 'usage', arguments: {} }),
      ) as typeof data;
      expect(bobsUsage.you.periods.hour?.calls.search).toBe(1);
      expect(bobsUsage.limits[1]).toMatchObject({ scope: 'you', used: 1, left: 1 });
    } finally {
      await ana.close();
      await bob.close();
    }
  });

  it('records as the person’s a call they declined, and one their limit refuses before asking them', async () => {
    reference.service.reset();
    let asked = 0;
    const user = new Client(
      { name: 'asking', version: '1' },
      { capabilities: { elicitation: { form: {} } } },
    );
    // The first confirmation is declined, the next accepted.
    user.setRequestHandler(ElicitRequestSchema, () =>
      ++asked === 1 ? { action: 'decline' } : { action: 'accept', content: {} },
    );
    const env = { GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-'), GATEWAY_LIMITS_PER_USER: 'speech=1/day' };
    const ana = await serverOf('ana', { ...env, GATEWAY_CONFIRM: 'speech' }, user);
    const bob = await serverOf('bob', env);
    const speak = (conn: Connected, text: string) =>
      conn.client.callTool({ name: 'audio_speech', arguments: { text } }) as Promise<CallToolResult>;
    try {
      expect((await speak(bob, 'bob speaks')).isError).toBeFalsy();
      expect((await speak(ana, 'ana is asked')).isError).toBe(true);
      expect((await speak(ana, 'ana speaks')).isError).toBeFalsy();
      const refused = await speak(ana, 'ana again');
      expect(textOf(refused)).toMatch(
        /^Not sent, and nothing billed: your limit speech=1\/day \(GATEWAY_LIMITS_PER_USER\)/,
      );
      expect(asked).toBe(2);
      expect(sqliteRows(env.GATEWAY_LEDGER_DIR).map((r) => [r.words, r.person, r.outcome, r.reason])).toEqual(
        [
          ['bob speaks', 'bob', 'accepted', null],
          ['ana is asked', 'ana', 'declined', 'declined by the user'],
          ['ana speaks', 'ana', 'accepted', null],
          ['ana again', 'ana', 'declined', 'limit speech=1/day per user'],
        ],
      );
    } finally {
      await ana.close();
      await bob.close();
    }
  });

  it('tells the budget webhook of each crossing once, signed, retried, while the calls go on', async () => {
    reference.service.reset();
    const secret = 'a-secret-of-the-operator-0123456789';
    const received: { id: string; status: number; body: Record<string, unknown>; signed: boolean }[] = [];
    let held = 0;
    const receiver = createServer(async (request: IncomingMessage, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const id = String(request.headers['x-gateway-event']);
      const expected = createHmac('sha256', secret).update(
        `${request.headers['x-gateway-timestamp']}.${body}`,
      );
      const signed = request.headers['x-gateway-signature'] === `sha256=${expected.digest('hex')}`;
      // Each event's first attempt is held, then answered 503: the calls must not wait for it.
      const first = !received.some((r) => r.id === id);
      const status = first ? 503 : 200;
      received.push({ id, status, body: JSON.parse(body), signed });
      if (first) {
        held++;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        held--;
      }
      response.writeHead(status).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const env = {
      GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-'),
      GATEWAY_LIMITS: 'search=5/hour',
      GATEWAY_LIMITS_PER_USER: 'search=2/hour',
      GATEWAY_BUDGET_WEBHOOK: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/budget`,
      GATEWAY_BUDGET_WEBHOOK_SECRET: secret,
    };
    const ana = await serverOf('ana', env);
    const bob = await serverOf('bob', env);
    try {
      await search(ana, 'first question');
      const second = await search(ana, 'second question');
      expect(second.isError).toBeFalsy();
      await until(() => held > 0, 5_000, 'the held delivery');
      // The call answered while its webhook's delivery is held by the receiver.
      await search(bob, 'bob asks');
      expect(held).toBeGreaterThan(0);
      await search(bob, 'bob asks again');
      const accepted = () => received.filter((r) => r.status === 200);
      await until(() => accepted().length === 5, 15_000, 'five deliveries');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const events = accepted().map((r) => r.body);
      expect(events.map((e) => [e.person, e.setting, e.limit, e.share, e.used, e.left]).sort()).toEqual(
        [
          ['ana', 'GATEWAY_LIMITS_PER_USER', 'search=2/hour', 80, 2, 0],
          ['ana', 'GATEWAY_LIMITS_PER_USER', 'search=2/hour', 100, 2, 0],
          ['bob', 'GATEWAY_LIMITS_PER_USER', 'search=2/hour', 80, 2, 0],
          ['bob', 'GATEWAY_LIMITS_PER_USER', 'search=2/hour', 100, 2, 0],
          ['bob', 'GATEWAY_LIMITS', 'search=5/hour', 80, 4, 1],
        ].sort(),
      );
      // Exactly once each: every event tried twice (503, then 200), with one id, always signed.
      expect(received).toHaveLength(10);
      expect(new Set(accepted().map((r) => r.id)).size).toBe(5);
      expect(received.every((r) => r.signed)).toBe(true);
      const everything = JSON.stringify(received.map((r) => r.body));
      for (const never of [secret, 'question', 'bob asks', env.GATEWAY_BUDGET_WEBHOOK])
        expect(everything).not.toContain(never);
    } finally {
      await ana.close();
      await bob.close();
      receiver.close();
    }
  });

  it('lets a delivery under way finish as the server stops: its retry is sent at once, not dropped', async () => {
    const statuses: number[] = [];
    const seen = new Set<string>();
    const receiver = createServer(async (request, response) => {
      for await (const _ of request);
      const id = String(request.headers['x-gateway-event']);
      const status = seen.has(id) ? 200 : 503;
      seen.add(id);
      statuses.push(status);
      response.writeHead(status).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const ana = await serverOf('ana', {
      GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-'),
      GATEWAY_LIMITS: 'search=1/hour',
      GATEWAY_BUDGET_WEBHOOK: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/budget`,
      GATEWAY_BUDGET_WEBHOOK_SECRET: 'a-secret-of-the-operator-0123456789',
    });
    try {
      expect((await search(ana, 'the only one')).isError).toBeFalsy();
      // 80 % and 100 % of search=1/hour, each first answered 503: their retries wait 1 s.
      await until(() => statuses.length === 2, 5_000, 'the first attempts');
      const stopping = performance.now();
      await ana.close();
      expect(statuses).toEqual([503, 503, 200, 200]);
      expect(performance.now() - stopping).toBeLessThan(1_000);
    } finally {
      receiver.close();
    }
  });
});
