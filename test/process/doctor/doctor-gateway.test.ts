// doctor (the built CLI) and the tools in front of what is not a working gateway: a server that
// answers 404 to everything, one that answers JSON but no model list, a reverse proxy that
// redirects to https, a host name that does not resolve, a closed port. doctor names each one,
// fails, skips what needs a gateway, and points to the gateway guide; a gateway that is not
// 9router but has the same API is still accepted.
import { cpSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUIDE_ELSEWHERE } from '../../../src/doctor/gateway-guide.js';
import {
  connectInMemory,
  connectStdio,
  PROJECT_ROOT,
  type RunResult,
  runCli,
  SERVER_NODE,
  tempDir,
  textOf,
} from '../../harness/harness.js';
import { scaled } from '../../harness/time.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';
import { lineFor, MODEL_LINES } from './report-lines.js';

const SECRET = 'sk-doctor-gateway-0123456789abcdef';

interface Loopback {
  url: string;
  port: number;
  /** Every request it answered, as `METHOD /path`, and whether it carried the key. */
  seen: { request: string; withKey: boolean }[];
  close(): Promise<void>;
}

/** A tiny HTTP server on loopback that answers every request with `answer`. */
async function loopback(
  answer: (req: IncomingMessage, res: ServerResponse, port: number) => void,
): Promise<Loopback> {
  const seen: Loopback['seen'] = [];
  const server = createServer((req, res) => {
    seen.push({
      request: `${req.method} ${req.url}`,
      withKey: req.headers.authorization === `Bearer ${SECRET}`,
    });
    req.resume();
    answer(req, res, port);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

/** A TCP port that counts the connections made to it: where a redirect points, never to be reached. */
async function trap(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let count = 0;
  const server: TcpServer = createTcpServer((socket) => {
    count += 1;
    socket.destroy();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as { port: number }).port,
    connections: () => count,
    close: () => new Promise((done) => server.close(() => done())),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = await loopback((_req, res) => res.end());
  await server.close();
  return server.port;
}

/**
 * A host name that fails resolution without any DNS query leaving the machine: a label longer
 * than 63 octets, which the system resolver refuses to put in a query (RFC 1035 §2.3.4), under
 * the reserved `.invalid` TLD (RFC 6761). A plain `x.invalid` would be sent to the configured
 * name server.
 */
const UNRESOLVABLE = `http://${'a'.repeat(64)}.invalid:20128`;

let notFound: Loopback;
let anyJson: Loopback;
let redirecting: Loopback;
let otherGateway: Loopback;
let target: Awaited<ReturnType<typeof trap>>;
let service: ReferenceService;

beforeAll(async () => {
  notFound = await loopback((_req, res) => {
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('Not Found');
  });
  anyJson = await loopback((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
  target = await trap();
  // A reverse proxy moving http to https keeps the route; credentials and a query in the target
  // stay out of every message.
  redirecting = await loopback((req, res) => {
    res.writeHead(307, {
      location: `https://proxy-user:proxy-pass@127.0.0.1:${target.port}${req.url}?token=tok-abc`,
    });
    res.end();
  });
  // Another gateway with the same API: no /api/health, but the model lists and the key check.
  otherGateway = await loopback((req, res) => {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/v1/models') return json(200, { object: 'list', data: [{ id: 'acme/chat-1' }] });
    if (req.url === '/v1/models/web') {
      return json(200, {
        data: [
          { id: 'tavily/search', kind: 'webSearch' },
          { id: 'tavily/fetch', kind: 'webFetch' },
        ],
      });
    }
    if (req.url === '/v1/search') {
      const keyed = req.headers.authorization === `Bearer ${SECRET}`;
      return json(keyed ? 400 : 401, {
        error: { message: keyed ? 'Missing required field: query' : 'Missing API key' },
      });
    }
    json(404, { error: { message: 'not found' } });
  });
  service = await startReferenceService({ apiKey: SECRET });
});
afterAll(async () => {
  await Promise.all([notFound, anyJson, redirecting, otherGateway, target, service].map((s) => s?.close()));
});

async function doctor(env: Record<string, string>, args: string[] = []): Promise<RunResult> {
  const run = await runCli(['doctor', ...args], {
    GATEWAY_API_KEY: SECRET,
    GATEWAY_MAX_RETRIES: '0',
    CWD: tempDir('gtm-doctor-'),
    ...env,
  });
  expect(run.stdout + run.stderr).not.toContain(SECRET);
  return run;
}

const GUIDE_IN_REPO = join(PROJECT_ROOT, 'docs/gateway.md');
/** What the built CLI of this checkout names as the guide. */
const GUIDE_SHOWN = existsSync(GUIDE_IN_REPO) ? GUIDE_IN_REPO : GUIDE_ELSEWHERE;

describe('doctor knows a gateway when it sees one', () => {
  it('names a server that answers 404 to everything as not a gateway, fails, and skips every model', async () => {
    const run = await doctor({ GATEWAY_BASE_URL: notFound.url });
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /does not look like/)).toBe(
      `✗ Something answers at ${notFound.url}, but it does not look like a 9router gateway: GET /api/health and GET /v1/models answered 404`,
    );
    expect(run.stdout).toContain(
      `fix: Set GATEWAY_BASE_URL to the gateway's address (9router listens on http://127.0.0.1:20128 by default). No gateway yet? ${GUIDE_SHOWN} shows how to set one up.`,
    );
    for (const what of MODEL_LINES) {
      expect(lineFor(run.stdout, what)).toMatch(/^· .*: not checked \(no gateway at GATEWAY_BASE_URL\)$/);
    }
    expect(run.stdout).toMatch(/Not ready: 1 required check\(s\) failed/);
    // Only the two routes a gateway is known by were asked: no key check, no model list.
    expect(notFound.seen.map((s) => s.request)).toEqual(['GET /api/health', 'GET /v1/models']);
  });

  it('names a server that answers JSON but no model list as not a gateway', async () => {
    const run = await doctor({ GATEWAY_BASE_URL: anyJson.url }, ['--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout) as {
      ok: boolean;
      checks: { id: string; status: string; message: string }[];
    };
    expect(report.ok).toBe(false);
    expect(report.checks[0]).toMatchObject({
      id: 'service',
      status: 'fail',
      message: `Something answers at ${anyJson.url}, but it does not look like a 9router gateway: GET /api/health answered without {"ok":true} and GET /v1/models answered without a model list`,
    });
    expect(report.checks.filter((c) => c.status === 'skip').map((c) => c.id)).toEqual([
      'api_key',
      'search',
      'fetch',
      'chat',
      'summary',
      'speech',
      'transcription',
      'video',
    ]);
  });

  it('accepts a gateway that is not 9router: no /api/health, but a model list at /v1/models', async () => {
    const run = await doctor({ GATEWAY_BASE_URL: otherGateway.url });
    expect(lineFor(run.stdout, /Service reachable/)).toBe(
      `✓ Service reachable at ${otherGateway.url} (it has no /api/health; /v1/models answered with 1 model)`,
    );
    expect(lineFor(run.stdout, /API key/)).toMatch(/^✓ API key accepted/);
    expect(lineFor(run.stdout, /Web search/)).toBe(
      '✓ Web search (web_search): tavily (discovered at /v1/models/web; 1 listed)',
    );
    expect(run.code, run.stdout).toBe(0);
  });

  it('names a redirect with its target, and never follows it', async () => {
    const run = await doctor({ GATEWAY_BASE_URL: redirecting.url });
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /redirects/)).toBe(
      `✗ The gateway's address ${redirecting.url} redirects to https://127.0.0.1:${target.port}/api/health (HTTP 307): set GATEWAY_BASE_URL to https://127.0.0.1:${target.port}`,
    );
    expect(lineFor(run.stdout, /Web search/)).toMatch(/^· .*not checked/);
    expect(lineFor(run.stdout, /Video/)).toMatch(/^· .*not checked/);
    expect(run.stdout).not.toMatch(/not valid JSON|proxy-user|proxy-pass|tok-abc/);
    expect(target.connections()).toBe(0);
  });

  it('names a redirect to the root of another address, and the base URL it likely means', async () => {
    const toRoot = await loopback((_req, res) => {
      res.writeHead(301, { location: `https://127.0.0.1:${target.port}/` });
      res.end();
    });
    try {
      const run = await doctor({ GATEWAY_BASE_URL: toRoot.url });
      expect(run.code).toBe(1);
      expect(lineFor(run.stdout, /redirects/)).toBe(
        `✗ The gateway's address ${toRoot.url} redirects to https://127.0.0.1:${target.port}/ (HTTP 301) instead of answering GET /api/health: set GATEWAY_BASE_URL to the gateway's own address, likely https://127.0.0.1:${target.port}`,
      );
      expect(toRoot.seen.map((s) => s.request)).toEqual(['GET /api/health']);
    } finally {
      await toRoot.close();
    }
    expect(target.connections()).toBe(0);
  });

  it('says "check the host name" when the gateway host name does not resolve', async () => {
    const run = await doctor({ GATEWAY_BASE_URL: UNRESOLVABLE });
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /Cannot reach/)).toBe(
      `✗ Cannot reach the service at ${UNRESOLVABLE}: its host name does not resolve (ENOTFOUND)`,
    );
    expect(run.stdout).toMatch(/\n {4}fix: Check the host name in GATEWAY_BASE_URL /);
    expect(run.stdout).not.toMatch(/Start the gateway/);
  });

  it('skips every model line, video too, when nothing listens, and points to the guide', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const run = await doctor({ GATEWAY_BASE_URL: url });
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /Cannot reach/)).toBe(`✗ Cannot reach the service at ${url} (ECONNREFUSED)`);
    expect(run.stdout).toContain(`No gateway yet? ${GUIDE_SHOWN} shows how to set one up.`);
    for (const what of MODEL_LINES) {
      expect(lineFor(run.stdout, what)).toMatch(/^· .*: not checked \(needs a reachable gateway\)$/);
    }
  });

  it('skips every model line, video too, when the key is refused', async () => {
    const run = await doctor({ GATEWAY_BASE_URL: service.url, GATEWAY_API_KEY: 'sk-not-the-key-0123456789' });
    expect(run.code).toBe(1);
    expect(lineFor(run.stdout, /Video/)).toBe(
      '· Video (video_generate): not checked (needs an accepted API key)',
    );
  });

  it('masks credentials in the base URL the same way everywhere in the report', async () => {
    const port = await closedPort();
    const run = await doctor({ GATEWAY_BASE_URL: `http://admin:hunter2-pass@127.0.0.1:${port}/` });
    expect(run.stdout).not.toMatch(/admin|hunter2/);
    expect(run.stdout).toContain(`service http://***@127.0.0.1:${port}, API key set`);
    expect(lineFor(run.stdout, /Cannot reach/)).toBe(
      `✗ Cannot reach the service at http://***@127.0.0.1:${port} (ECONNREFUSED)`,
    );
    const named = run.stdout.match(/\/\/[^/\s]*@/g) ?? [];
    expect(new Set(named)).toEqual(new Set(['//***@']));
  });
});

describe('the tools say the same', () => {
  it('a redirect is named with its target, not as an unreadable answer', async () => {
    const stdio = await connectStdio({ GATEWAY_BASE_URL: redirecting.url, GATEWAY_API_KEY: SECRET });
    try {
      const result = await stdio.client.callTool({
        name: 'web_search',
        arguments: { query: 'x', provider: 'tavily' },
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(
        `The gateway's address ${redirecting.url} redirects to https://127.0.0.1:${target.port}/v1/search (HTTP 307): set GATEWAY_BASE_URL to https://127.0.0.1:${target.port}.`,
      );
      expect(textOf(result)).not.toMatch(/not valid JSON|proxy-pass|tok-abc/);
    } finally {
      await stdio.close();
    }
    expect(target.connections()).toBe(0);
  });

  it('a redirected video submit is said to have billed nothing', async () => {
    const conn = await connectInMemory({ GATEWAY_BASE_URL: redirecting.url, GATEWAY_API_KEY: SECRET });
    try {
      const result = await conn.client.callTool({ name: 'video_generate', arguments: { prompt: 'a cat' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/never reached the service, so nothing was billed/);
      expect(textOf(result)).toMatch(
        /redirects to https:\/\/127\.0\.0\.1:\d+\/v1\/videos\/generations \(HTTP 307\)/,
      );
    } finally {
      await conn.close();
    }
    expect(redirecting.seen.filter((s) => s.request.startsWith('POST /v1/videos'))).toHaveLength(1);
  });

  it('a host name that does not resolve is named as such', async () => {
    const conn = await connectInMemory({
      GATEWAY_BASE_URL: UNRESOLVABLE,
      GATEWAY_API_KEY: SECRET,
      GATEWAY_MAX_RETRIES: '0',
    });
    try {
      const result = await conn.client.callTool({
        name: 'web_search',
        arguments: { query: 'x', provider: 'tavily' },
      });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        /its host name does not resolve \(ENOTFOUND\)\. Check the host name in GATEWAY_BASE_URL/,
      );
    } finally {
      await conn.close();
    }
  });
});

describe('the gateway guide doctor points to', () => {
  it('is the docs/gateway.md installed beside dist/, found through the bin link npx runs', async () => {
    // The layout npm installs: node_modules/gateway-tools-mcp/{dist,docs}, a bin link to
    // dist/cli.js, and undici beside it.
    const root = tempDir('gtm-installed-');
    const pkg = join(root, 'node_modules', 'gateway-tools-mcp');
    cpSync(join(PROJECT_ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
    // Its package.json says the bundle is an ES module, as every install and bundle has it.
    cpSync(join(PROJECT_ROOT, 'package.json'), join(pkg, 'package.json'));
    mkdirSync(join(pkg, 'docs'));
    writeFileSync(join(pkg, 'docs', 'gateway.md'), '# Getting a gateway\n');
    symlinkSync(join(PROJECT_ROOT, 'node_modules', 'undici'), join(root, 'node_modules', 'undici'));
    mkdirSync(join(root, 'node_modules', '.bin'));
    const bin = join(root, 'node_modules', '.bin', 'gateway-tools-mcp');
    symlinkSync('../gateway-tools-mcp/dist/cli.js', bin);

    const url = `http://127.0.0.1:${await closedPort()}`;
    const env = { GATEWAY_BASE_URL: url, GATEWAY_MAX_RETRIES: '0' };
    const installed = await runInstalled(bin, env);
    const guide = join(pkg, 'docs', 'gateway.md');
    expect(installed).toContain(`No gateway yet? ${guide} shows how to set one up.`);
    expect(existsSync(guide)).toBe(true);

    // A bundle without the guide beside it names where the guide is instead.
    const alone = tempDir('gtm-bundle-');
    cpSync(join(PROJECT_ROOT, 'dist'), join(alone, 'dist'), { recursive: true });
    cpSync(join(PROJECT_ROOT, 'package.json'), join(alone, 'package.json'));
    symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(alone, 'node_modules'));
    expect(await runInstalled(join(alone, 'dist', 'cli.js'), env)).toContain(
      'No gateway yet? docs/gateway.md in the gateway-tools-mcp package shows how to set one up.',
    );
  });

  it('is named by the built CLI of this checkout', async () => {
    const run = await doctor({ GATEWAY_BASE_URL: notFound.url });
    expect(run.stdout).toContain(`No gateway yet? ${GUIDE_SHOWN} shows how to set one up.`);
  });
});

/** Runs doctor from `entry` (a copy of dist/cli.js, or a link to one) and returns its report. */
async function runInstalled(entry: string, env: Record<string, string>): Promise<string> {
  const { spawnSync } = await import('node:child_process');
  const run = spawnSync(SERVER_NODE, [entry, 'doctor'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    cwd: tempDir('gtm-doctor-'),
    encoding: 'utf8',
    timeout: scaled(15_000),
  });
  expect(run.status).toBe(1);
  return run.stdout;
}
