// Where the package sends a new user, and that the two pages a new user reads first agree: the
// package's repository, homepage and issues (package.json, the MCP Registry name, the plugin's
// marketplace line), every link to the repository the built server, --help and the demo print
// (each to a file and heading that exist), and the README and the gateway guide starting 9router
// and adding the server to Claude Code in the same words.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helpText } from '../../src/config/help.js';
import { REPOSITORY_URL } from '../../src/links.js';
import { PROJECT_ROOT } from '../harness/harness.js';
import { headingAnchors } from './doc-links.js';

const read = (path: string) => readFileSync(join(PROJECT_ROOT, path), 'utf8');
const PKG = JSON.parse(read('package.json')) as {
  repository: { type: string; url: string };
  homepage: string;
  bugs: { url: string };
  mcpName: string;
};
const README = read('README.md');
const GUIDE = read('docs/gateway.md');
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Every link into the repository in `text`: the file it names and the heading, if any. */
function repositoryLinks(text: string): { link: string; file: string; anchor?: string }[] {
  const pattern = new RegExp(
    `${REPOSITORY_URL.replaceAll('.', '\\.')}(/blob/main/([\\w./-]+))?(#([\\w-]+))?`,
    'g',
  );
  return [...text.matchAll(pattern)].map((m) => ({ link: m[0], file: m[2] ?? 'README.md', anchor: m[4] }));
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(PROJECT_ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.js'))
    .map((entry) => relative(PROJECT_ROOT, join(entry.parentPath, entry.name)));
}

describe('where the package lives', () => {
  it('package.json names the repository, its page and its issues, as the MCP Registry name does', () => {
    const [, owner, name] = /^https:\/\/github\.com\/([^/]+)\/([^/]+)$/.exec(REPOSITORY_URL) ?? [];
    expect(PKG.repository).toEqual({ type: 'git', url: `git+${REPOSITORY_URL}.git` });
    expect(PKG.homepage).toBe(`${REPOSITORY_URL}#readme`);
    expect(PKG.bugs.url).toBe(`${REPOSITORY_URL}/issues`);
    expect(PKG.mcpName).toBe(`io.github.${owner}/${name}`);
  });

  it('the plugin names it too, and where its settings form says a gateway comes from', () => {
    const plugin = JSON.parse(read('plugin/.claude-plugin/plugin.json')) as {
      homepage: string;
      repository: string;
      userConfig: { gateway_base_url: { description: string } };
    };
    expect(plugin.homepage).toBe(PKG.homepage);
    expect(plugin.repository).toBe(REPOSITORY_URL);
    expect(plugin.userConfig.gateway_base_url.description).toContain(
      `${REPOSITORY_URL}/blob/main/docs/gateway.md`,
    );
  });

  it('the plugin marketplace lines name that repository, with no placeholder left to fill', () => {
    const repo = REPOSITORY_URL.replace('https://github.com/', '');
    for (const tool of ['claude', 'codex']) {
      expect(README).toContain(`${tool} plugin marketplace add ${repo}\``);
    }
    for (const page of [README, read('docs/clients.md'), GUIDE]) expect(page).not.toContain('<owner>');
  });
});

describe('links to the repository', () => {
  const sources: [string, string][] = [
    ...filesUnder('dist').map((file): [string, string] => [file, read(file)]),
    ['--help', helpText('1.0.0')],
    ['scripts/demo-session.ts', read('scripts/demo-session.ts')],
  ];

  it('are printed by doctor, --help and the demo', () => {
    const found = sources.flatMap(([, text]) => repositoryLinks(text).map((l) => l.link));
    expect(found).toContain(`${REPOSITORY_URL}/blob/main/docs/gateway.md`);
  });

  it.each(sources)('in %s, each leads to a file and a heading that exist', (_where, text) => {
    for (const { link, file, anchor } of repositoryLinks(text)) {
      const page = read(file);
      if (anchor) expect(headingAnchors(page), link).toContain(anchor);
    }
  });
});

describe('the README and the gateway guide say the same', () => {
  const startBlock = (page: string) => /```sh\n(npx -y 9router@[^\n]*)\n```/.exec(page)?.[1];

  it('on starting 9router: pinned, on 127.0.0.1, and why', () => {
    expect(startBlock(README)).toBe('npx -y 9router@0.5.69 --host 127.0.0.1');
    expect(startBlock(README)).toBe(startBlock(GUIDE));
    const why =
      '`--host 127.0.0.1` keeps it on this machine: by default 9router listens on every network interface, so its API would be reachable from the network.';
    expect(oneLine(README)).toContain(why);
    expect(oneLine(GUIDE)).toContain(why);
    // No unpinned start, and none on every interface, anywhere a user copies from.
    for (const page of [README, GUIDE])
      expect(page).not.toMatch(/npx (-y )?9router(?!@0\.5\.69 --host 127\.0\.0\.1)/);
  });

  it('on adding the server to Claude Code: for every project (--scope user), and why', () => {
    const add = (page: string) =>
      /claude mcp add --scope user gateway-tools --env GATEWAY_API_KEY=\S+ -- npx -y gateway-tools-mcp/.exec(
        page,
      )?.[0];
    expect(add(README)).toBeDefined();
    expect(add(GUIDE)?.replace('$GATEWAY_API_KEY', 'your-key')).toBe(add(README));
    const why = 'in every project of yours (without `--scope user`, only in the folder you run it in)';
    expect(oneLine(README)).toContain(why);
    expect(oneLine(GUIDE)).toContain(why);
    expect(README).not.toMatch(/claude mcp add (?!--scope user)/);
  });
});

describe('--help', () => {
  it('opens with what the server is, what it needs and where the guide is', () => {
    const opening = helpText('1.2.3').split('\nUsage:')[0] ?? '';
    expect(opening).toMatch(
      /^gateway-tools-mcp 1\.2\.3 — an MCP server that gives coding agents an AI gateway as tools/,
    );
    expect(oneLine(opening)).toContain('Needs Node.js 22.13 or later, and a running 9router');
    expect(opening).toContain(
      `Getting a gateway, step by step, and everything else:\n  ${REPOSITORY_URL}/blob/main/docs/gateway.md\n`,
    );
  });
});
