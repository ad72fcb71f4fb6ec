import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPlainRequest } from '../../src/transports/stdio-transport.js';
import { messageLike } from '../fuzz/harness/json-rpc-lines.js';

// The stdio transport recognises common requests without the SDK's zod union. It may send any
// message to that schema, but what it accepts on its own must be what the schema accepts, unchanged.
describe('isPlainRequest', () => {
  it('accepts only messages JSONRPCMessageSchema accepts, and as they are', () => {
    let recognised = 0;
    fc.assert(
      fc.property(messageLike, (line) => {
        const value: unknown = JSON.parse(line);
        if (!isPlainRequest(value)) return;
        recognised++;
        const parsed = JSONRPCMessageSchema.safeParse(value);
        expect(parsed.success, line).toBe(true);
        expect(parsed.data).toEqual(value);
      }),
      { seed: 7, numRuns: 5_000 },
    );
    // Most generated messages are malformed somewhere, but a share of them is not.
    expect(recognised).toBeGreaterThan(100);
  });

  it('recognises what clients send every call', () => {
    const call = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'web_search', arguments: { query: 'q' }, _meta: { progressToken: 'p' } },
    };
    for (const message of [
      call,
      { jsonrpc: '2.0', id: 'a', method: 'tools/list' },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7, reason: 'x' } },
    ]) {
      expect(isPlainRequest(message), JSON.stringify(message)).toBe(true);
    }
  });

  it('leaves the rest to the schema', () => {
    for (const message of [
      { jsonrpc: '2.0', id: 1.5, method: 'ping' },
      { jsonrpc: '2.0', id: null, method: 'ping' },
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 'ping', extra: true },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: [] },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { progressToken: 1.5 } } },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { other: 1 } } },
      { jsonrpc: '2.0', id: 1, result: {} },
      JSON.parse('{"jsonrpc":"2.0","method":"ping","__proto__":{}}'),
    ]) {
      expect(isPlainRequest(message), JSON.stringify(message)).toBe(false);
    }
  });
});
