import { describe, expect, it } from 'vitest';
import { catalogEntry } from '../../src/catalog.js';
import { ALL_TOOLS } from '../../src/tools/index.js';
import { connectInMemory, hintsOf } from '../support/harness.js';

const MCP_DEFAULTS: Record<string, boolean> = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: true,
};

describe('tool hints in the catalog', () => {
  it('read with MCP defaults, say what each tool declares', () => {
    for (const tool of ALL_TOOLS) {
      const declared = { ...MCP_DEFAULTS, ...tool.annotations };
      const read = hintsOf(catalogEntry(tool, tool.name, undefined));
      expect(read.readOnlyHint, tool.name).toBe(declared.readOnlyHint);
      expect(read.openWorldHint, tool.name).toBe(declared.openWorldHint);
      // MCP gives the destructive and idempotent hints meaning only for tools that change things.
      if (!declared.readOnlyHint) {
        expect(read.destructiveHint, tool.name).toBe(declared.destructiveHint);
        expect(read.idempotentHint, tool.name).toBe(declared.idempotentHint);
      }
    }
  });

  it('carry no hint a client would assume anyway', () => {
    for (const tool of ALL_TOOLS) {
      const listed = catalogEntry(tool, tool.name, undefined).annotations ?? {};
      for (const [key, value] of Object.entries(listed)) {
        expect(value, `${tool.name}.${key}`).not.toBe(MCP_DEFAULTS[key]);
        if (listed.readOnlyHint) expect(['readOnlyHint', 'openWorldHint', 'title']).toContain(key);
      }
    }
  });
});

describe('catalog size', () => {
  it('lists all tools, output schemas included, in at most 12 KB', async () => {
    const conn = await connectInMemory({ GATEWAY_BASE_URL: 'http://127.0.0.1:9', GATEWAY_API_KEY: 'k' });
    try {
      const list = await conn.client.listTools();
      expect(list.tools.length).toBe(ALL_TOOLS.length);
      expect(list.tools.every((tool) => tool.outputSchema)).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(list))).toBeLessThanOrEqual(12_000);
    } finally {
      await conn.close();
    }
  });
});
