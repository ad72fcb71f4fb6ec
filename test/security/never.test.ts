import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../harness/harness.js';

// What the server never does, checked on its source: the evidence for "no shell, no eval, no
// telemetry, no stdout logging, no writes outside the output directory" is that the code that
// could do those things is not there (and the tests of each tool show what the code that is
// there does). Adding such code makes one of these tests fail and needs a reason in docs/security.md.

const SRC = join(PROJECT_ROOT, 'src');
const sources = readdirSync(SRC, { recursive: true, withFileTypes: true })
  .filter((e) => e.isFile() && e.name.endsWith('.ts'))
  .map((e) => {
    const path = join(e.parentPath, e.name);
    return { file: relative(SRC, path), text: readFileSync(path, 'utf8') };
  });

/** Files whose code (comments removed) matches `pattern`. */
function filesMatching(pattern: RegExp): string[] {
  return sources.filter(({ text }) => pattern.test(withoutComments(text))).map(({ file }) => file);
}

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** The names a file imports (values, not types) from the given module specifiers. */
function valueImports(text: string, modules: readonly string[]): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(/import\s+(?!type\b)(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s+from\s+'([^']+)'/g)) {
    if (!modules.includes(match[2] ?? '')) continue;
    for (const part of (match[1] ?? '').split(',')) {
      const name = part.trim();
      if (name && !name.startsWith('type ')) names.push(name.split(/\s+as\s+/)[0] ?? name);
    }
  }
  return names;
}

describe('what the server never does', () => {
  it('is present: the scan sees the sources', () => {
    expect(sources.length).toBeGreaterThan(40);
    expect(sources.some((s) => s.file === 'main.ts')).toBe(true);
  });

  it('runs no shell, no other program and no dynamic code', () => {
    expect(
      filesMatching(/node:(child_process|worker_threads|cluster)|\beval\s*\(|new\s+Function\s*\(/),
    ).toEqual([]);
    expect(filesMatching(/node:vm/)).toEqual([]);
  });

  it("sets no V8 flag at run time and calls no garbage collector: memory is V8's to manage", () => {
    expect(filesMatching(/setFlagsFromString|expose-gc|\bgc\s*\(/)).toEqual([]);
  });

  it('makes outbound connections only through the service client; no other HTTP client, no socket', () => {
    // Type-only imports of undici (for its body type) load nothing.
    expect(filesMatching(/import\(\s*'undici'\s*\)|^import\s+(?!type\b)[^;]*from\s+'undici'/m)).toEqual([
      'gateway/client.ts',
    ]);
    // The two exceptions, each to an address the operator names: the OAuth resource server asks
    // the issuer (GATEWAY_OAUTH_ISSUER) for its metadata, keys and introspection, and the budget
    // webhook posts its events to GATEWAY_BUDGET_WEBHOOK.
    expect(filesMatching(/\bfetch\(|XMLHttpRequest|WebSocket/)).toEqual([
      'tools/usage/budget-webhook.ts',
      'transports/http/oauth/tokens.ts',
    ]);
    expect(filesMatching(/(from\s+|getBuiltinModule\()'node:(https|http2|tls|dgram)'/)).toEqual([]);
    // Built-ins taken lazily (not at start-up) are only these: address checks and DNS.
    const lazy = sources.flatMap((s) =>
      [...s.text.matchAll(/getBuiltinModule\('([^']+)'\)/g)].map((m) => m[1]),
    );
    expect(new Set(lazy)).toEqual(new Set(['node:net', 'node:dns']));
    // node:http only for the HTTP transport's own server; node:net only for address parsing.
    const httpValues = sources.filter((s) => valueImports(s.text, ['node:http']).length > 0);
    expect(httpValues.map((s) => s.file)).toEqual(['transports/http/serve.ts']);
    expect(valueImports(httpValues[0]?.text ?? '', ['node:http'])).toEqual(['createServer']);
    const netValues = sources.flatMap((s) => valueImports(s.text, ['node:net']));
    expect(new Set(netValues)).toEqual(new Set(['isIP']));
    // The ledger's PostgreSQL client connects only to GATEWAY_LEDGER_URL, loaded only for it.
    expect(filesMatching(/import\(\s*'pg'\s*\)|^import\s+(?!type\b)[^;]*from\s+'pg'/m)).toEqual([
      'ledger/postgres.ts',
    ]);
  });

  it('contacts no host of its own: every URL in the code is loopback or an example', () => {
    const hosts = new Set<string>();
    // Addresses shown to a person, never requested: where the docs are (links.ts) and where to
    // get Node.js (the version check), each only in its own module.
    const shown: Record<string, RegExp> = {
      'links.ts': /^github\.com$/,
      'lib/node-version.ts': /^nodejs\.org$/,
    };
    for (const { file, text } of sources) {
      for (const match of withoutComments(text).matchAll(/https?:\/\/([A-Za-z0-9.\-_[\]:@]+)/g)) {
        if (!shown[file]?.test(match[1] ?? '')) hosts.add(match[1] ?? '');
      }
    }
    // example.com: the page doctor --live asks the gateway's fetch provider for (the provider
    // reaches it, not this server); app. and mcp.example.com in the settings' examples.
    const allowed = /^(127\.0\.0\.1(:\d+)?|localhost|((app|mcp)\.)?example\.com|user:pass@host)$/;
    expect([...hosts].filter((h) => !allowed.test(h))).toEqual([]);
  });

  it('writes nothing to stdout but JSON-RPC (and --help, --version, doctor reports)', () => {
    expect(filesMatching(/\bconsole\./)).toEqual([]);
    const stdoutLines = sources.flatMap(({ file, text }) =>
      text
        .split('\n')
        .filter((line) => /process\.stdout\.write/.test(line))
        .map((line) => ({ file, marked: line.includes('// allow-stdout:') })),
    );
    expect(stdoutLines.length).toBeGreaterThan(0);
    expect(stdoutLines.filter((l) => !l.marked || l.file !== 'main.ts')).toEqual([]);
  });

  it('writes files only where the output directory, the ledger, the private temp dir and the doctor probe live', () => {
    const writers = [
      'writeFile',
      'writeFileSync',
      'appendFile',
      'appendFileSync',
      'createWriteStream',
      'mkdir',
      'mkdirSync',
      'mkdtemp',
      'mkdtempSync',
      'rm',
      'rmSync',
      'rmdir',
      'unlink',
      'unlinkSync',
      'rename',
      'renameSync',
      'copyFile',
      'cp',
      'symlink',
      'link',
      'chmod',
      'chown',
      'truncate',
      'utimes',
    ];
    const writing = sources
      .filter((s) => valueImports(s.text, ['node:fs', 'node:fs/promises']).some((n) => writers.includes(n)))
      .map((s) => s.file)
      .sort();
    expect(writing).toEqual([
      'doctor/file-checks.ts', // a probe file in the output directory, removed at once
      'files/download.ts', // a private temporary directory, always removed
      'files/exit-cleanup.ts', // removes this process's temporary files when it exits
      'files/output-files.ts', // the output directory
      'ledger/sqlite-place.ts', // the ledger's folder (GATEWAY_LEDGER_DIR), made when first needed
      'ledger/sqlite.ts', // the clock's file of its own in the ledger's folder, unlinked as it is opened
      'shared-state/output-markers.ts', // a replica's marker in the output directory, removed as it stops
      'tools/audio/audio-speech.ts', // removes an empty file it just saved in the output directory
    ]);
    // Files opened by name for writing: only the exclusive create of a new output file (the
    // directory itself is opened read-only, to reach names through it).
    const opens = sources.flatMap(({ file, text }) =>
      [...withoutComments(text).matchAll(/\bawait open\(([^()]*)\)/g)].map((m) => `${file}: ${m[1]}`),
    );
    expect(opens.length).toBeGreaterThan(2);
    const inputFiles = sources.find((s) => s.file === 'files/input-files.ts')?.text ?? '';
    expect(inputFiles).toMatch(/const OPEN_FLAGS = constants\.O_RDONLY \|/);
    expect(inputFiles).not.toMatch(/O_(WRONLY|RDWR|CREAT|TRUNC|APPEND)/);
    expect(opens.filter((o) => !/, ('r'|OPEN_FLAGS)$/.test(o))).toEqual([
      'files/output-files.ts: realDir, constants.O_RDONLY | constants.O_DIRECTORY',
      "files/output-files.ts: temporary, 'wx'",
    ]);
  });
});
