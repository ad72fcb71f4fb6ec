// Writes the argument tables of docs/tools.md from the tools' own schemas, the JSON Schemas a
// client lists (src/mcp/tool-listing.ts): `npm run docs:tools`. test/tools/tools-doc.test.ts fails
// when the page differs from what this makes, so the tables cannot fall behind the code.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allowedBy, type Json } from '../src/mcp/schema-sentences.js';
import { convertSchemas } from '../src/mcp/tool-listing.js';
import { ALL_TOOLS } from '../src/tools/index.js';

export const TOOLS_DOC = resolve(fileURLToPath(import.meta.url), '../../docs/tools.md');
const START =
  "<!-- Made by `npm run docs:tools` from the tools' schemas: change a schema, then run it. A test fails while they differ. -->";
const END = '<!-- End of what `npm run docs:tools` makes. -->';

interface InputSchema extends Json {
  required?: string[];
  properties?: Record<string, Json & { default?: unknown }>;
}

/** One table per tool: each argument, what it takes, its default (or that it is required) and what it is. */
export function argumentTables(): string {
  const schemas = convertSchemas(ALL_TOOLS);
  return ALL_TOOLS.flatMap((tool) => {
    const input = schemas[tool.name]?.input as InputSchema;
    const properties = Object.entries(input.properties ?? {});
    if (properties.length === 0) return [`### \`${tool.name}\``, '', 'No arguments.', ''];
    return [
      `### \`${tool.name}\``,
      '',
      '| argument | takes | default | what it is |',
      '|---|---|---|---|',
      ...properties.map(([name, field]) => {
        const required = input.required?.includes(name);
        const shown = required
          ? 'required'
          : 'default' in field
            ? `\`${JSON.stringify(field.default)}\``
            : '—';
        const cells = [`\`${name}\``, allowedBy(field) ?? 'any value', shown, field.description ?? ''];
        return `| ${cells.map((cell) => cell.replaceAll('|', '\\|').replaceAll('\n', ' ')).join(' | ')} |`;
      }),
      '',
    ];
  }).join('\n');
}

/** docs/tools.md with its argument tables made anew between the two markers. */
export function toolsDoc(current = readFileSync(TOOLS_DOC, 'utf8')): string {
  const start = current.indexOf(START);
  const end = current.indexOf(END);
  if (start === -1 || end < start) throw new Error(`docs/tools.md has lost its markers: ${START} … ${END}`);
  return `${current.slice(0, start + START.length)}\n\n${argumentTables()}\n${current.slice(end)}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(TOOLS_DOC, toolsDoc());
}
