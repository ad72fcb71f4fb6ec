import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { listedTool } from '../../src/mcp/tool-listing.js';
import { ALL_TOOLS } from '../../src/tools/index.js';

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

describe('tool hints in the catalog', () => {
  it('every tool lists all four hints, explicitly, as it declares them', () => {
    for (const tool of ALL_TOOLS) {
      const listed = listedTool(tool, tool.name, undefined).annotations ?? {};
      for (const hint of HINTS) expect(typeof listed[hint], `${tool.name}.${hint}`).toBe('boolean');
      expect(listed, tool.name).toEqual(tool.annotations);
    }
  });

  it('marks the billed tools as neither read-only nor idempotent', () => {
    const billed = ['video_generate', 'video_edit', 'video_extend', 'audio_speech', 'audio_transcribe'];
    for (const tool of ALL_TOOLS.filter((t) => billed.includes(t.name))) {
      const listed = listedTool(tool, tool.name, undefined).annotations;
      expect(listed, tool.name).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    }
  });
});

describe('catalog size', () => {
  const entries = ALL_TOOLS.map((tool) => listedTool(tool, tool.name, undefined));
  const byName = new Map(entries.map((e) => [e.name, e]));
  const property = (tool: string, name: string) => {
    const properties = byName.get(tool)?.inputSchema.properties as Record<string, object> | undefined;
    return properties?.[name];
  };

  it('all eleven tools with their output schemas fit the 13 KB budget (13,300 bytes)', () => {
    expect(entries).toHaveLength(11);
    expect(entries.every((e) => e.outputSchema?.type === 'object')).toBe(true);
    expect(Buffer.byteLength(JSON.stringify({ tools: entries }))).toBeLessThanOrEqual(13_300);
  });

  it('leaves out size guards of 4096 or more, which the server still enforces', () => {
    expect(property('web_fetch', 'url')).not.toHaveProperty('maxLength');
    expect(property('audio_transcribe', 'data_base64')).not.toHaveProperty('maxLength');
    const shape = ALL_TOOLS.find((t) => t.name === 'web_fetch')?.inputSchema ?? {};
    const parsed = z.object(shape).safeParse({ url: `https://example.com/${'a'.repeat(4100)}` });
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['url'], code: 'too_big' });
  });

  it('keeps the bounds a model should know', () => {
    expect(property('web_search', 'query')).toMatchObject({ maxLength: 400 });
    expect(property('video_generate', 'prompt')).toMatchObject({ maxLength: 4000 });
    expect(property('web_fetch', 'max_length')).toMatchObject({ minimum: 100, maximum: 100_000 });
  });
});
