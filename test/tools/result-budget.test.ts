import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { knownClient, resultView } from '../../src/mcp/result-view.js';
import { boundResult, capped } from '../../src/tools/result-budget.js';

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe('capped', () => {
  it('leaves a field that fits alone, and says how much it cut from one that does not', () => {
    expect(capped('short', 10)).toBe('short');
    expect(capped('x'.repeat(1234), 10)).toBe(`${'x'.repeat(10)}… [cut: 1,224 more characters]`);
  });

  it('never splits a surrogate pair', () => {
    const cut = capped(`${'a'.repeat(9)}😀${'b'.repeat(20)}`, 10);
    expect(cut.startsWith(`${'a'.repeat(9)}…`)).toBe(true);
  });
});

describe('boundResult', () => {
  it('sends a result within the budget as it is', () => {
    const result: CallToolResult = {
      content: [{ type: 'text', text: 'hi' }],
      structuredContent: { a: 'hi' },
    };
    expect(boundResult(result, 1000)).toBe(result);
  });

  it('cuts the longest strings, text and structured alike, until the result fits, saying so', () => {
    const page = 'é'.repeat(300_000);
    const result: CallToolResult = {
      content: [{ type: 'text', text: `# Title\n\n${page}` }],
      structuredContent: { title: 'Title', content: page, total_length: 300_000 },
    };
    const bounded = boundResult(result, 200_000);
    expect(bytes(bounded)).toBeLessThanOrEqual(200_000);
    const text = (bounded.content[0] as { text: string }).text;
    expect(text).toMatch(/^# Title\n\néé/);
    expect(text).toMatch(/\n\[cut: [\d,]+ more characters over the result's size budget\]$/);
    expect(bounded.structuredContent).toMatchObject({ title: 'Title', total_length: 300_000 });
    expect((bounded.structuredContent as { content: string }).content).toMatch(/\[cut: [\d,]+ more/);
    // The original is not changed.
    expect((result.structuredContent as { content: string }).content).toBe(page);
  });

  it('leaves inline audio out first, and says so', () => {
    const result: CallToolResult = {
      content: [
        { type: 'text', text: 'Saved speech to /out/a.mp3.' },
        { type: 'audio', data: 'A'.repeat(50_000), mimeType: 'audio/mpeg' },
      ],
    };
    const bounded = boundResult(result, 10_000);
    expect(bounded.content.map((c) => c.type)).toEqual(['text', 'text']);
    expect(JSON.stringify(bounded)).toContain('Saved speech to /out/a.mp3.');
    expect(JSON.stringify(bounded)).toContain('Inline media left out');
  });

  it('cuts strings inside arrays of objects (search results) too', () => {
    const results = Array.from({ length: 20 }, (_, i) => ({
      title: `${i}`.padEnd(100_000, 'T'),
      url: `u${i}`,
    }));
    const bounded = boundResult(
      { content: [{ type: 'text', text: 'list' }], structuredContent: { results } },
      300_000,
    );
    expect(bytes(bounded)).toBeLessThanOrEqual(300_000);
    const out = (bounded.structuredContent as { results: { url: string }[] }).results;
    expect(out.map((r) => r.url)).toEqual(results.map((r) => r.url));
  });
});

describe('the result view of each client', () => {
  it('gives the clients known to read text the text alone, and an unknown client both forms', () => {
    const textOnly = { structured: false, links: false };
    for (const name of [
      'claude-code',
      'codex-mcp-client',
      'gemini-cli-mcp-client',
      'cursor-vscode',
      'Visual Studio Code',
      'Visual Studio Code - Insiders',
      'langchain-mcp-adapter',
      'mcp-use',
      'mastra',
    ]) {
      expect(resultView('auto', { name, version: '1' }), name).toEqual(textOnly);
    }
    expect(resultView('auto', { name: 'ai-sdk-mcp-client', version: '1' })).toEqual({
      structured: true,
      links: false,
    });
    expect(resultView('auto', { name: 'some-agent', version: '1' })).toEqual({
      structured: true,
      links: true,
    });
    expect(resultView('auto', undefined)).toEqual({ structured: true, links: true });
  });

  it('follows the setting whatever the client', () => {
    expect(resultView('structured', { name: 'claude-code', version: '1' })).toEqual({
      structured: true,
      links: true,
    });
    expect(resultView('text', { name: 'some-agent', version: '1' })).toEqual({
      structured: false,
      links: false,
    });
    expect(knownClient({ name: 'Claude-Code' })?.client).toBe('Claude Code');
  });
});
