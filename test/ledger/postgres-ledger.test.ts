// A team's ledger in PostgreSQL, through the front door: built servers (dist/cli.js over stdio),
// each with a GATEWAY_LEDGER_DIR of its own as on separate hosts, share one ledger through
// GATEWAY_LEDGER_URL on a real PostgreSQL server, against the reference service: one limit for all
// of them, one duplicate guard, one list of recent jobs, one usage report (read over one
// connection); the database's password never shows in a result, a log line, doctor or usage; a
// wrong password or a database that does not answer sends nothing and says where (without the
// password) and what to fix.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useReferenceService } from '../harness/gateway.js';
import { connectStdio, runCli, type Spawned, structuredOf, tempDir, textOf } from '../harness/harness.js';
import { listJobs } from '../harness/ledger.js';
import { HAS_POSTGRES, POSTGRES_MISSING, type RunningPostgres, startPostgres } from '../harness/postgres.js';
import { submitsOf } from '../harness/video.js';

if (!HAS_POSTGRES) console.warn(`Not run: test/ledger/postgres-ledger.test.ts. ${POSTGRES_MISSING}`);

const reference = useReferenceService();

describe.skipIf(!HAS_POSTGRES)('a ledger in PostgreSQL shared by servers on several hosts', () => {
  let postgres: RunningPostgres;
  let database = 0;
  const servers: Spawned[] = [];

  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await postgres?.stop();
  });

  /** A fresh database of the test server's user, and its URL (with the password). */
  async function freshDatabase(): Promise<string> {
    const name = `team_${++database}`;
    await postgres.psql(`CREATE DATABASE ${name} OWNER ${postgres.user}`);
    return postgres.url.replace(/\/[^/]*$/, `/${name}`);
  }

  /** A server as on a host of its own: its own folder, the shared database. */
  async function host(url: string, env: Record<string, string> = {}): Promise<Spawned & { dir: string }> {
    const dir = tempDir('gtm-host-');
    const server = await connectStdio({
      ...reference.env,
      GATEWAY_LEDGER_DIR: join(dir, 'ledger'),
      GATEWAY_LEDGER_URL: url,
      GATEWAY_LOG_LEVEL: 'debug',
      ...env,
    });
    servers.push(server);
    return { ...server, dir };
  }

  async function submit(server: Spawned, prompt: string): Promise<CallToolResult> {
    return (await server.client.callTool({
      name: 'video_generate',
      arguments: { prompt, duration: 4, wait_seconds: 0 },
    })) as CallToolResult;
  }

  it('holds one limit for every host: three hosts racing under video=2/day send exactly two', async () => {
    reference.service.reset();
    const url = await freshDatabase();
    const hosts = await Promise.all([1, 2, 3].map(() => host(url, { GATEWAY_LIMITS: 'video=2/day' })));
    const results = await Promise.all(
      hosts.flatMap((h, i) => [0, 1].map((j) => submit(h, `a lighthouse in a gale, host ${i} take ${j}`))),
    ).catch((error: unknown) => {
      throw new Error(`${error}\n${hosts.map((h) => h.stderr()).join('\n')}`);
    });
    const sent = results.filter((r) => !r.isError);
    const refused = results.filter((r) => r.isError);
    expect(sent).toHaveLength(2);
    expect(submitsOf(reference.service)).toHaveLength(2);
    for (const r of refused)
      expect(textOf(r)).toMatch(
        /^Not sent, and nothing billed: the shared limit video=2\/day \(GATEWAY_LIMITS\) is reached, with 2 video calls in the last 24 hours/,
      );
    // Nothing was written on the hosts: the ledger is the database.
    for (const h of hosts) expect(existsSync(join(h.dir, 'ledger'))).toBe(false);

    // A fourth host lists both jobs, whoever submitted them.
    const fourth = await host(url);
    const { jobs } = await listJobs(fourth.client);
    expect(jobs.map((j) => j.job_id).sort()).toEqual(
      sent.map((r) => structuredOf<{ job_id: string }>(r)?.job_id).sort(),
    );
    // And the report of every host's calls, from a terminal on yet another.
    const usage = await runCli(['usage', '--json'], {
      GATEWAY_LEDGER_URL: url,
      GATEWAY_LIMITS: 'video=2/day',
    });
    expect(usage.code, usage.stderr).toBe(0);
    const data = JSON.parse(usage.stdout);
    expect(data.periods.day.calls.video).toBe(2);
    expect(data.periods.day.not_billed).toBe(4);
    expect(data.limits).toEqual([expect.objectContaining({ limit: 'video=2/day', used: 2, left: 0 })]);
  });

  it('reads a usage report over one connection to the database, however many limits it reports on', async () => {
    const url = await freshDatabase();
    const server = await host(url, {
      GATEWAY_LIMITS: 'video=5/day,speech=5/day,chat=5/hour,cost=100/day',
      GATEWAY_LIMITS_PER_USER: 'video=2/day,chat=3/hour,cost=10/month',
      GATEWAY_PRICES: 'chat:*=0.50/1m-tokens,search:*=0.005/call',
    });
    const report = (await server.client.callTool({ name: 'usage', arguments: {} })) as CallToolResult;
    expect(report.isError, textOf(report)).toBeFalsy();
    expect(textOf(report)).toMatch(/cost=10\/month/);
    // Read at once, its seven limits' reads had the pool open a connection for each, up to four.
    const database = new URL(url).pathname.slice(1);
    const connections = await postgres.psql(
      `SELECT count(*) FROM pg_stat_activity WHERE datname = '${database}' AND application_name = 'gateway-tools-mcp'`,
    );
    expect(connections.trim()).toBe('1');
  });

  it('answers an identical submit on another host with the first host’s job, sending nothing', async () => {
    reference.service.reset();
    const url = await freshDatabase();
    const [a, b] = await Promise.all([host(url), host(url)]);
    const first = await submit(a, 'a paper boat on a rain gutter, macro');
    expect(first.isError, textOf(first)).toBeFalsy();
    const again = await submit(b, 'a paper boat on a rain gutter, macro');
    expect(again.isError).toBeFalsy();
    expect(structuredOf<{ job_id: string }>(again)?.job_id).toBe(
      structuredOf<{ job_id: string }>(first)?.job_id,
    );
    expect(textOf(again)).toContain(
      'Nothing was sent or billed: an identical video_generate was accepted at ',
    );
    expect(submitsOf(reference.service)).toHaveLength(1);
  });

  it('never shows the password: not in results, logs, doctor or usage; doctor names the database masked', async () => {
    reference.service.reset();
    const url = await freshDatabase();
    const server = await host(url, { GATEWAY_LIMITS: 'video=1/day' });
    const results = [
      await submit(server, 'a kite over dunes'),
      await submit(server, 'a kite over dunes at noon'),
    ];
    const usageTool = await server.client.callTool({ name: 'usage', arguments: {} });
    const doctor = await runCli(['doctor'], { ...reference.env, GATEWAY_LEDGER_URL: url });
    const doctorJson = await runCli(['doctor', '--json'], { ...reference.env, GATEWAY_LEDGER_URL: url });
    const usage = await runCli(['usage'], { GATEWAY_LEDGER_URL: url });
    const masked = url.replace(`${postgres.user}:${postgres.password}@`, '***@');
    expect(doctor.stdout).toContain(
      `✓ Ledger of billed calls: PostgreSQL at ${masked}, shared by every server process on every host that names it`,
    );
    expect(usage.stdout).toContain(`(ledger ${masked})`);
    const everything = [
      ...results.map((r) => JSON.stringify(r)),
      JSON.stringify(usageTool),
      server.stderr(),
      doctor.stdout,
      doctor.stderr,
      doctorJson.stdout,
      usage.stdout,
      usage.stderr,
    ].join('\n');
    expect(everything).toContain('***@');
    expect(everything).not.toContain(postgres.password);
  });

  it('sends nothing with a wrong password, and says where without the password and what to fix', async () => {
    reference.service.reset();
    const wrong = 'not-the-password-4f2a';
    const url = postgres.url.replace(`:${postgres.password}@`, `:${wrong}@`);
    const server = await host(url);
    const result = await submit(server, 'a glass of water on a train table');
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/^Not sent, and nothing billed: /);
    expect(text).toContain(url.replace(`${postgres.user}:${wrong}@`, '***@'));
    expect(text).toContain('GATEWAY_LEDGER_URL');
    expect(`${text}\n${server.stderr()}`).not.toContain(wrong);
    expect(submitsOf(reference.service)).toHaveLength(0);
    const doctor = await runCli(['doctor'], { ...reference.env, GATEWAY_LEDGER_URL: url });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/^✗ Ledger of billed calls: /m);
    expect(doctor.stdout).not.toContain(wrong);
  });

  it('sends nothing when the database does not answer, within the wait bound', async () => {
    reference.service.reset();
    const url = 'postgres://ledger:secret-pw-9@127.0.0.1:9/ledger';
    const server = await host(url);
    const started = Date.now();
    const result = await submit(server, 'a heron in the fog');
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^Not sent, and nothing billed: .*postgres:\/\/\*\*\*@127\.0\.0\.1:9\/ledger/,
    );
    expect(textOf(result)).not.toContain('secret-pw-9');
    expect(submitsOf(reference.service)).toHaveLength(0);
    expect(readdirSync(server.dir)).toEqual([]);
  });
});
