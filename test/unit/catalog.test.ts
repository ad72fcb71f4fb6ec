import { describe, expect, it } from 'vitest';
import { catalogEntry } from '../../src/catalog.js';
import { ALL_TOOLS } from '../../src/tools/index.js';

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

describe('tool hints in the catalog', () => {
  it('every tool lists all four hints, explicitly, as it declares them', () => {
    for (const tool of ALL_TOOLS) {
      const listed = catalogEntry(tool, tool.name, undefined).annotations ?? {};
      for (const hint of HINTS) expect(typeof listed[hint], `${tool.name}.${hint}`).toBe('boolean');
      expect(listed, tool.name).toEqual(tool.annotations);
    }
  });

  it('marks the billed tools as neither read-only nor idempotent', () => {
    const billed = ['video_generate', 'video_edit', 'video_extend', 'audio_speech', 'audio_transcribe'];
    for (const tool of ALL_TOOLS.filter((t) => billed.includes(t.name))) {
      const listed = catalogEntry(tool, tool.name, undefined).annotations;
      expect(listed, tool.name).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    }
  });
});
