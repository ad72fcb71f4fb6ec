// The forge's workflows (.github/workflows/), read as text: CI runs .ci/run on every pull request
// with the system packages it needs and the npm cache kept, and a version tag releases what
// `npm run release` builds: npm with provenance, the bundle and the checksums on the GitHub
// release, server.json in the MCP Registry after the package exists. The workflows' own syntax and
// expressions are checked by actionlint (docs/releases.md says how); nothing here runs them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../harness/harness.js';

const read = (path: string) => readFileSync(join(PROJECT_ROOT, path), 'utf8');
const CI = read('.github/workflows/ci.yml');
const RELEASE = read('.github/workflows/release.yml');
const CI_RUN = read('.ci/run');

/** The job's steps, each as its text (`name`, `run` or `uses`, and the rest), in order. */
const steps = (workflow: string) => workflow.split(/^ {6}- /m).slice(1);

describe('CI on pull requests', () => {
  it('runs .ci/run on every pull request and on main, in Debian as root', () => {
    expect(CI).toMatch(/^on:\n {2}pull_request:\n {2}push:\n {4}branches: \[main\]$/m);
    expect(CI).toMatch(/image: node:22-trixie/);
    expect(steps(CI).at(-1)).toMatch(/^name: \.ci\/run\n\s+run: bash \.ci\/run\n/);
  });

  it('installs every system package .ci/run would otherwise install, and openssl', () => {
    const wanted = [...CI_RUN.matchAll(/missing\+=\((\w+)\)/g)].map((m) => m[1]);
    expect(wanted.sort()).toEqual(['bindfs', 'chromium', 'faketime', 'haproxy', 'postgresql']);
    const installed = /apt-get install -y -qq (.*)$/m.exec(CI)?.[1]?.split(' ') ?? [];
    for (const name of [...wanted, 'openssl']) expect(installed).toContain(name);
  });

  it('keeps the npm cache and the pinned test programs between runs, keyed by what pins them', () => {
    expect(CI).toContain('uses: actions/cache@v4');
    expect(CI).toMatch(/path: \|\n\s+~\/\.npm\n\s+~\/\.cache\/gateway-tools-mcp\n/);
    expect(CI).toContain("hashFiles('package-lock.json', '.ci/run'");
  });

  it('covers the Node lines .ci/run tests: 22.13.0, then 24 and 26 (through npm run test:all)', () => {
    expect(CI_RUN).toContain('NODE_VERSION=22.13.0');
    expect(CI_RUN).toMatch(/npm run test:all/);
    const testAll = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')).scripts['test:all'];
    expect(testAll).toMatch(/test:node -- 24\./);
    expect(testAll).toMatch(/test:node -- 26\./);
    expect(CI).toContain('name: .ci/run (Node 22.13.0, 24, 26)');
  });
});

describe('the release on a version tag', () => {
  it('runs on v* tags only, with the permissions provenance and the release need', () => {
    expect(RELEASE).toMatch(/^on:\n {2}push:\n {4}tags: \['v\*'\]$/m);
    expect(RELEASE).toMatch(/^permissions:\n {2}contents: read$/m);
    expect(RELEASE).toMatch(/id-token: write/);
    expect(RELEASE).toMatch(/contents: write/);
  });

  it('builds with npm run release, then publishes the built tarball with provenance, the release files, and server.json last', () => {
    const order = steps(RELEASE);
    const at = (pattern: RegExp) => order.findIndex((s) => pattern.test(s));
    expect(at(/^run: npm ci/)).toBeGreaterThan(-1);
    expect(at(/run: npm run release\n/)).toBeGreaterThan(at(/^run: npm ci/));
    expect(at(/sha256sum --check SHA256SUMS/)).toBeGreaterThan(at(/npm run release/));
    expect(
      at(
        /npm publish "release\/gateway-tools-mcp-\$\{GITHUB_REF_NAME#v\}\.tgz" --provenance --access public/,
      ),
    ).toBeGreaterThan(at(/sha256sum/));
    expect(RELEASE).toMatch(
      /gh release create[\s\S]*gateway-tools-mcp-\$\{GITHUB_REF_NAME#v\}\.mcpb" release\/SHA256SUMS/,
    );
    expect(at(/mcp-publisher publish/)).toBeGreaterThan(at(/npm publish/));
    // The files it names are the ones the release script writes.
    const script = read('scripts/release/release.mjs');
    for (const name of [
      'gateway-tools-mcp-<version>.tgz',
      'gateway-tools-mcp-<version>.mcpb',
      'SHA256SUMS',
      'server.json',
    ])
      expect(script).toContain(name);
  });

  it('refuses a tag that is not the package version', () => {
    expect(RELEASE).toContain('if [ "v$version" != "$GITHUB_REF_NAME" ]; then');
  });
});
