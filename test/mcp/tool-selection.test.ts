import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config.js';
import { REQUIRED_TOOLS, selectTools, serverInstructions } from '../../src/mcp/tool-selection.js';

const names = (tools: { name: string }[]) => tools.map((t) => t.name);
const select = (tools?: string[], disabledTools: string[] = []) =>
  names(selectTools({ tools, disabledTools }));

describe('required-tools invariant', () => {
  it('lists the required tools by default', () => {
    expect(select()).toEqual(expect.arrayContaining([...REQUIRED_TOOLS]));
  });

  it('adds them to any allow-list', () => {
    expect(select(['video'])).toEqual(expect.arrayContaining([...REQUIRED_TOOLS]));
    expect(select(['web_search'])).toEqual(expect.arrayContaining([...REQUIRED_TOOLS]));
    expect(select(['models', 'chat'])).toEqual(expect.arrayContaining([...REQUIRED_TOOLS]));
  });

  it('refuses a deny-list that names a required tool or its group', () => {
    for (const denied of ['web_search', 'web_fetch', 'search', 'fetch', ' WEB_FETCH ']) {
      expect(() => select(undefined, [denied])).toThrow(ConfigError);
      expect(() => select(undefined, [denied])).toThrow(/required agent tool and cannot be disabled/);
    }
  });

  it('accepts deny-lists of other groups and rejects unknown names', () => {
    expect(select(undefined, ['video', 'audio_speech'])).toEqual(expect.arrayContaining([...REQUIRED_TOOLS]));
    expect(() => select(['vidoe'])).toThrow(/unknown tool or group "vidoe" in GATEWAY_TOOLS/);
    expect(() => select(undefined, ['nope'])).toThrow(/GATEWAY_DISABLED_TOOLS/);
  });

  it('names the required tools, prefixed, in the instructions', () => {
    const text = serverInstructions(
      { toolPrefix: 'gw_' },
      selectTools({ tools: undefined, disabledTools: [] }),
    );
    expect(text).toContain('gw_web_search');
    expect(text).toContain('gw_web_fetch');
    expect(text).toMatch(/Required agent tools/);
  });
});
