import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect, it } from 'vitest';
import { useGateway } from '../harness/gateway.js';
import { textOf } from '../harness/harness.js';
import { until } from '../harness/video.js';

// Long transfers (streamed answers, speech, uploads, downloads) and short calls go through
// separate connection pools: however many long ones hold their connections, a search is not
// queued behind them. The answer stalls here are the reference service's (it holds each answer
// for seconds); the real gateway answers its fakes at once.

const LONG_CALLS = 33;
const gw = useGateway({ env: { GATEWAY_TIMEOUT_MS: '30000' } });

it(`a search is answered while ${LONG_CALLS} long answers hold their connections`, async () => {
  gw.service.inject('responses', { delayMs: 4_000, times: Number.POSITIVE_INFINITY });
  let longDone = 0;
  const long = Array.from({ length: LONG_CALLS }, (_, i) =>
    (
      gw.conn.client.callTool({
        name: 'ask_model',
        arguments: { prompt: `slow ${i}`, model: 'openai/gpt-4o-mini' },
      }) as Promise<CallToolResult>
    ).finally(() => {
      longDone += 1;
    }),
  );
  // More than a pool holds (32) are waiting on the service before the search is sent.
  await until(() => (gw.service.counters.responses ?? 0) >= 32, 10_000, 'the long calls in flight');
  const search = (await gw.conn.client.callTool({
    name: 'web_search',
    arguments: { query: 'while others wait', provider: 'tavily' },
  })) as CallToolResult;
  expect(search.isError, textOf(search)).toBeFalsy();
  expect(longDone).toBe(0);
  const answers = await Promise.all(long);
  expect(answers.every((a) => !a.isError)).toBe(true);
});
