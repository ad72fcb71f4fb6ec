import { homedir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/config/config.js';
import { startupWarnings } from '../../src/config/startup-warnings.js';

const warningsFor = (argv: string[], env: Record<string, string> = {}) =>
  startupWarnings(parseCommandLine(argv, env, '/work/project').config, argv);

describe('start-up warnings for settings that weaken the server', () => {
  it('says nothing for the defaults and for keys in the environment', () => {
    expect(warningsFor([], { GATEWAY_API_KEY: 'k-0123456789' })).toEqual([]);
    expect(
      warningsFor([], { GATEWAY_API_KEY: 'k-0123456789', GATEWAY_BASE_URL: 'http://10.0.0.5:20128' }),
    ).toEqual([]);
    expect(warningsFor([], { GATEWAY_BASE_URL: 'https://gw.example.com' })).toEqual([]);
  });

  it('warns about secrets given as flags, without repeating them', () => {
    const warnings = warningsFor(['--api-key', 'k-0123456789', '--mcp-token=t-0123456789abcdef']);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/--api-key is visible .*GATEWAY_API_KEY or GATEWAY_API_KEY_FILE/);
    expect(warnings[1]).toMatch(/--mcp-token is visible .*set GATEWAY_MCP_TOKEN instead/);
    expect(warnings.join(' ')).not.toMatch(/0123456789/);
  });

  it('warns when the key would cross a network in clear text', () => {
    expect(
      warningsFor([], { GATEWAY_API_KEY: 'k-0123456789', GATEWAY_BASE_URL: 'http://gw.example.com' }),
    ).toEqual([expect.stringMatching(/plain http to gw.example.com.*use https/)]);
  });

  it('warns when protections are switched off or the input roots are the whole disk or home', () => {
    expect(warningsFor(['--allow-private-urls', '*'])).toEqual([
      expect.stringMatching(/GATEWAY_ALLOW_PRIVATE_URLS is \*/),
    ]);
    expect(warningsFor([], { GATEWAY_INPUT_ROOTS: `/,${homedir()},/work/project/media` })).toEqual([
      expect.stringMatching(/GATEWAY_INPUT_ROOTS includes \/:/),
      expect.stringMatching(/GATEWAY_INPUT_ROOTS includes .*anywhere under it/),
    ]);
  });

  it('warns when replicas on several hosts would share a token but not the confirmations used', () => {
    const team = {
      GATEWAY_TRANSPORT: 'http',
      GATEWAY_HOST: '0.0.0.0',
      GATEWAY_MCP_TOKEN: 't-0123456789abcdef',
      GATEWAY_CONFIRM: 'video',
    };
    expect(warningsFor([], team)).toEqual([
      expect.stringMatching(
        /replicas on other hosts .* sent again; give every replica the same GATEWAY_LEDGER_URL/,
      ),
    ]);
    // One shared ledger, or every replica on this host (loopback), or nothing confirmed: nothing to say.
    expect(warningsFor([], { ...team, GATEWAY_LEDGER_URL: 'postgres://u:p@db.example.com/ledger' })).toEqual(
      [],
    );
    expect(warningsFor([], { ...team, GATEWAY_HOST: '127.0.0.1' })).toEqual([]);
    const { GATEWAY_CONFIRM: _confirm, ...unconfirmed } = team;
    expect(warningsFor([], unconfirmed)).toEqual([]);
  });
});
