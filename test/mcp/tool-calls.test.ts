// tools/call as the registry answers it before any tool runs: invalid arguments named one by one,
// an unknown tool, arguments that are not an object, and defaults applied.
import { CallToolResultSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useGateway } from '../harness/gateway.js';
import { textOf } from '../harness/harness.js';

const gw = useGateway();

describe('tools/call validation', () => {
  it('answers invalid arguments with an error result naming each argument, and calls nothing', async () => {
    const result = await gw.conn.client.callTool({
      name: 'web_search',
      arguments: { query: 'q'.repeat(401), max_results: 0, include_domains: ['not a domain'] },
    });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/^Invalid arguments for web_search: /);
    expect(text).toContain('query must be at most 400 characters');
    expect(text).toMatch(/max_results: .*>=\s?1/);
    expect(text).toContain('include_domains.0: must be a domain such as github.com');
    expect(gw.service.counters.search).toBe(0);
  });

  it('answers an unknown tool with an error result that lists the tools', async () => {
    const result = await gw.conn.client.callTool({ name: 'web_serch', arguments: { query: 'x' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Unknown tool "web_serch"; this server has web_search, web_fetch, /);
  });

  it('answers a tools/call whose arguments are not an object with -32602 (Invalid params)', async () => {
    for (const args of ['query', [1, 2], 42, null]) {
      const call = gw.conn.client.request(
        { method: 'tools/call', params: { name: 'web_search', arguments: args as never } },
        CallToolResultSchema,
      );
      await expect(call, JSON.stringify(args)).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    }
    expect(gw.service.counters.search).toBe(0);
  });

  it('applies defaults before the tool runs', async () => {
    const result = await gw.conn.client.callTool({ name: 'web_search', arguments: { query: 'defaults' } });
    expect(result.isError).toBeFalsy();
    expect(gw.service.requests.at(-1)?.body).toMatchObject({ max_results: 5, search_type: 'web' });
  });
});
