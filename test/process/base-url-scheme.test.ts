// GATEWAY_BASE_URL typed without its scheme (the host and port 9router prints, `127.0.0.1:20128`),
// as a client meets it: the server it starts over stdio exits 2 before answering, and the client's
// log (the server's stderr) says what to set instead; a password in the address is never shown.
import { describe, expect, it } from 'vitest';
import { failedStdioStart, SERVER_NODE } from '../harness/harness.js';

/** Starts the built server as a client does, and returns what its log got once connecting failed. */
async function clientLog(baseUrl: string): Promise<{ log: string }> {
  return {
    log: await failedStdioStart(SERVER_NODE, { GATEWAY_BASE_URL: baseUrl, GATEWAY_API_KEY: 'a-key' }),
  };
}

describe('GATEWAY_BASE_URL without http://, seen by the client', () => {
  it.each([
    ['127.0.0.1:20128', 'http://127.0.0.1:20128'],
    ['localhost:20128', 'http://localhost:20128'],
    ['gateway.example.com/base', 'http://gateway.example.com/base'],
  ])('%s: the log says to set %s, in one line', async (typed, meant) => {
    const { log } = await clientLog(typed);
    expect(log.trimEnd().split('\n')).toEqual([
      `gateway-tools-mcp: invalid GATEWAY_BASE_URL (--base-url): must be an http:// or https:// URL: did you mean ${meant}? (got "${typed}")`,
    ]);
  });

  it('with a password in it: neither the suggestion nor the line shows the password', async () => {
    const { log } = await clientLog('user:s3cret-pass@127.0.0.1:20128');
    expect(log).toContain('must be an http:// or https:// URL');
    expect(log).not.toContain('s3cret-pass');
  });
});
