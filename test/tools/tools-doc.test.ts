import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { argumentTables, TOOLS_DOC, toolsDoc } from '../../scripts/tools-doc.js';
import { convertSchemas } from '../../src/mcp/tool-listing.js';
import { ALL_TOOLS } from '../../src/tools/index.js';

describe("docs/tools.md's argument tables", () => {
  it("are what the tools' schemas make (run `npm run docs:tools` after changing a schema)", () => {
    const doc = readFileSync(TOOLS_DOC, 'utf8');
    expect(doc).toBe(toolsDoc(doc));
  });

  it('list every argument of every tool once, with what it takes and its default', () => {
    const tables = argumentTables();
    const schemas = convertSchemas(ALL_TOOLS);
    for (const tool of ALL_TOOLS) {
      const section = tables.slice(tables.indexOf(`### \`${tool.name}\``)).split('\n### ')[0] ?? '';
      const input = schemas[tool.name]?.input as { properties?: Record<string, { default?: unknown }> };
      for (const [name, field] of Object.entries(input.properties ?? {})) {
        const rows = section.split('\n').filter((line) => line.startsWith(`| \`${name}\` |`));
        expect(rows, `${tool.name}.${name}`).toHaveLength(1);
        if ('default' in field) expect(rows[0]).toContain(`\`${JSON.stringify(field.default)}\``);
      }
    }
    // What the schemas say, in the words refusals use.
    expect(tables).toContain('| `max_results` | a whole number from 1 to 20 | `5` |');
  });
});
