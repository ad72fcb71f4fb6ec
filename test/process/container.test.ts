import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, PROJECT_ROOT, SERVER_NODE, tempDir } from '../harness/harness.js';
import { diesWithParent } from '../harness/lifetime.js';
import { scaled } from '../harness/time.js';

// The Dockerfile of the HTTP service. This machine may have no Docker engine, so the file is
// checked for what it promises (non-root, only the built bundle, a health check on /healthz, no
// secrets baked in), its health check and settings are run against the built server, and the
// image itself is built and probed only where `docker info` works.

interface Instruction {
  op: string;
  args: string;
}

function stages(): Instruction[][] {
  const text = readFileSync(join(PROJECT_ROOT, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
  const out: Instruction[][] = [];
  for (const line of text.split('\n')) {
    const match = /^([A-Z]+)\s+(.*)$/.exec(line.trim());
    if (!match || line.trim().startsWith('#')) continue;
    const [, op = '', args = ''] = match;
    if (op === 'FROM') out.push([]);
    out.at(-1)?.push({ op, args });
  }
  return out;
}

const all = stages();
const final = all.at(-1)!;
const of = (op: string) => final.filter((i) => i.op === op);
const env = Object.fromEntries(
  of('ENV').flatMap((i) => i.args.split(/\s+/).map((pair) => pair.split('=') as [string, string])),
);
const healthCommand = (): string[] => {
  const [check] = of('HEALTHCHECK');
  return JSON.parse(/CMD\s+(\[.*\])\s*$/.exec(check!.args)![1]!);
};

const running: ChildProcess[] = [];
afterEach(() => {
  for (const child of running.splice(0)) child.kill();
});

function startServer(extra: Record<string, string>): Promise<{ child: ChildProcess; stderr: () => string }> {
  const server = diesWithParent(SERVER_NODE, [CLI]);
  const child = spawn(server.command, server.args, {
    cwd: tempDir('gtm-container-'),
    env: { PATH: process.env.PATH ?? '', ...env, ...extra },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.push(child);
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('listening on')) resolve({ child, stderr: () => stderr });
    });
    child.on('exit', () => resolve({ child, stderr: () => stderr }));
    child.on('error', reject);
  });
}

describe('Dockerfile', () => {
  it('runs the built bundle as the unprivileged node user, with only dist/ and the production dependencies', () => {
    expect(all).toHaveLength(2);
    expect(final[0]).toEqual({ op: 'FROM', args: 'node:26-alpine' });
    const users = of('USER').map((i) => i.args);
    expect(users).toEqual(['node']);
    expect(final.findIndex((i) => i.op === 'USER')).toBeLessThan(
      final.findIndex((i) => i.op === 'ENTRYPOINT'),
    );
    expect(of('COPY').map((i) => i.args)).toEqual([
      'package.json package-lock.json ./',
      '--from=build /src/dist ./dist',
    ]);
    expect(of('RUN').some((i) => i.args.startsWith('npm ci --omit=dev --ignore-scripts'))).toBe(true);
    expect(of('ENTRYPOINT').map((i) => JSON.parse(i.args))).toEqual([['node', '/app/dist/cli.js']]);
  });

  it('listens on all interfaces of the container, and bakes in no token and no key', () => {
    expect(env).toMatchObject({ GATEWAY_TRANSPORT: 'http', GATEWAY_HOST: '0.0.0.0', GATEWAY_PORT: '8080' });
    expect(of('EXPOSE').map((i) => i.args)).toEqual(['8080']);
    const text = readFileSync(join(PROJECT_ROOT, 'Dockerfile'), 'utf8');
    expect(text).not.toMatch(/^(ENV|ARG)\b.*(GATEWAY_MCP_TOKEN|GATEWAY_API_KEY)/m);
  });

  it('sends only the build inputs to the builder (no node_modules, .git, keys or outputs)', () => {
    const ignore = readFileSync(join(PROJECT_ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'));
    expect(ignore[0]).toBe('*');
    expect(ignore.slice(1).sort()).toEqual(
      [
        '!package.json',
        '!package-lock.json',
        '!tsconfig.json',
        '!tsconfig.build.json',
        '!scripts/',
        '!src/',
      ].sort(),
    );
    // Everything the build stage copies is let through.
    const copied = all[0]!.filter((i) => i.op === 'COPY').flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const path of copied)
      expect(
        [`!${path}`, `!${path}/`].some((p) => ignore.includes(p)),
        path,
      ).toBe(true);
  });

  it('refuses to start with its own settings until a token is given', async () => {
    const { child, stderr } = await startServer({});
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
    expect(child.exitCode).toBe(2);
    expect(stderr()).toMatch(/refusing to listen on 0\.0\.0\.0 without GATEWAY_MCP_TOKEN/);
  });

  it('has a health check that passes on a running server and fails on a stopped one', async () => {
    // Bound to loopback here (the test stays off other interfaces); port 0 lets the system pick.
    const { child, stderr } = await startServer({
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: '0',
      GATEWAY_MCP_TOKEN: 'a-token-of-at-least-16-characters',
    });
    const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stderr())?.[1];
    expect(port, stderr()).toBeDefined();
    const [command, ...args] = healthCommand();
    expect(command).toBe('node');
    const check = () =>
      spawnSync(SERVER_NODE, args, { env: { GATEWAY_PORT: port }, timeout: scaled(10_000) }).status;
    expect(check()).toBe(0);
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(check()).toBe(1);
  });

  const docker = spawnSync('docker', ['info'], { stdio: 'ignore', timeout: scaled(10_000) }).status === 0;
  it.skipIf(!docker)(
    'builds an image that runs as node and answers /healthz',
    { timeout: scaled(600_000) },
    async () => {
      const tag = `gateway-tools-mcp-test:${process.pid}`;
      execFileSync('docker', ['build', '-t', tag, '.'], { cwd: PROJECT_ROOT, stdio: 'ignore' });
      const id = execFileSync(
        'docker',
        [
          'run',
          '-d',
          '-e',
          'GATEWAY_MCP_TOKEN=a-token-of-at-least-16-characters',
          '-p',
          '127.0.0.1::8080',
          tag,
        ],
        { encoding: 'utf8' },
      ).trim();
      try {
        expect(execFileSync('docker', ['exec', id, 'id', '-un'], { encoding: 'utf8' }).trim()).toBe('node');
        const port = execFileSync('docker', ['port', id, '8080'], { encoding: 'utf8' })
          .trim()
          .split(':')
          .at(-1);
        let answer: Response | undefined;
        for (let i = 0; i < 50 && !answer?.ok; i++) {
          answer = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
          if (!answer?.ok) await new Promise((r) => setTimeout(r, 200));
        }
        expect(answer?.ok).toBe(true);
      } finally {
        execFileSync('docker', ['rm', '-f', id], { stdio: 'ignore' });
        execFileSync('docker', ['rmi', tag], { stdio: 'ignore' });
      }
    },
  );
});
