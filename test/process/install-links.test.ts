import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../harness/harness.js';

// The README's one-click install links are opaque (base64, percent-encoding): they must decode to
// the configuration the README and mcp.json.example show, or a user installs something else.

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
const example = JSON.parse(readFileSync(join(PROJECT_ROOT, 'mcp.json.example'), 'utf8'));
const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'));

/** The target of the markdown link with this text. */
function link(text: string): URL {
  const match = new RegExp(`\\[${text}\\]\\((https://[^)\\s]+)\\)`).exec(readme);
  expect(match, `a [${text}](…) link in README.md`).not.toBeNull();
  return new URL(match![1]!);
}

/** The JSON of every ```json block of the README. */
function jsonBlocks(): unknown[] {
  return [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
}

describe('install links in the README', () => {
  it('Add to Cursor installs the published entry of mcp.json.example', () => {
    const url = link('Add to Cursor');
    expect(url.origin + url.pathname).toBe('https://cursor.com/en/install-mcp');
    expect(url.searchParams.get('name')).toBe('gateway-tools');
    const config = JSON.parse(Buffer.from(url.searchParams.get('config')!, 'base64').toString('utf8'));
    expect(config).toEqual(example.mcpServers['gateway-tools-npx']);
    expect(config.args).toEqual(['-y', pkg.name]);
    // The cursor:// form the README names carries the same parameters.
    expect(readme).toContain('cursor://anysphere.cursor-deeplink/mcp/install?name=gateway-tools&config=');
  });

  it('Add to VS Code installs the npx form of the README mcp.json, with the key as a password input', () => {
    const url = link('Add to VS Code');
    expect(url.origin + url.pathname).toBe('https://vscode.dev/redirect/mcp/install');
    expect(url.searchParams.get('name')).toBe('gateway-tools');
    const inputs = JSON.parse(url.searchParams.get('inputs')!);
    const config = JSON.parse(url.searchParams.get('config')!);
    const shown = jsonBlocks().find(
      (b): b is { inputs: unknown; servers: Record<string, Record<string, unknown>> } =>
        Boolean((b as { servers?: unknown }).servers),
    );
    expect(shown, 'the VS Code mcp.json in README.md').toBeDefined();
    expect(inputs).toEqual(shown!.inputs);
    expect(inputs).toEqual([
      { type: 'promptString', id: 'gateway-key', description: 'Gateway API key', password: true },
    ]);
    expect(config).toEqual({ ...shown!.servers['gateway-tools'], command: 'npx', args: ['-y', pkg.name] });
    expect(config.env.GATEWAY_API_KEY).toBe(`\${input:gateway-key}`);
  });

  it('mcp.json.example offers a clone and the published package, with the same settings', () => {
    const { 'gateway-tools': clone, 'gateway-tools-npx': published } = example.mcpServers;
    expect(clone).toMatchObject({ command: 'node', args: ['/path/to/gateway-tools-mcp/dist/cli.js'] });
    expect(published).toMatchObject({ command: 'npx', args: ['-y', pkg.name] });
    expect(clone.env).toEqual(published.env);
    expect(pkg.bin[pkg.name]).toBe('dist/cli.js');
  });
});
