// The PostgreSQL harness itself (test/harness/postgres.ts): servers started side by side, each
// reached over TCP with its URL and password, and none left behind: not by stop(), not by a test
// process that dies without stopping its server.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../harness/harness.js';
import { eventually } from '../harness/http-harness.js';
import { HAS_POSTGRES, type RunningPostgres, runPsql, startPostgres } from '../harness/postgres.js';

/** A process that exists and is not a zombie (one whose parent died is reaped when init gets to it). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The processes whose parent is `pid`: a server's backends and background workers. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.skipIf(!HAS_POSTGRES)('a PostgreSQL server of its own for a test file', () => {
  let servers: RunningPostgres[] = [];
  beforeAll(async () => {
    servers = await Promise.all([startPostgres(), startPostgres()]);
  });
  afterAll(() => Promise.all(servers.map((server) => server.stop())));

  it('starts two at once, each with its own port and folder, reached over TCP with its URL', async () => {
    const [a, b] = servers as [RunningPostgres, RunningPostgres];
    expect(a.port).not.toBe(b.port);
    expect(a.dir).not.toBe(b.dir);
    for (const server of servers) {
      expect(server.url).toBe(`postgres://ledger:${server.password}@127.0.0.1:${server.port}/ledger`);
      expect(await runPsql([server.url], 'select 1')).toBe('1');
      expect(await runPsql([server.url], 'select current_user, current_database()')).toBe('ledger|ledger');
    }
  });

  it('asks for the password, listens on 127.0.0.1 only, and lets the user make tables and databases', async () => {
    const server = servers[0]!;
    const wrong = server.url.replace(`:${server.password}@`, ':wrong@');
    await expect(runPsql([wrong], 'select 1')).rejects.toThrow(/password authentication failed/);
    expect(await server.psql('show listen_addresses')).toBe('127.0.0.1');
    expect(await server.psql('select rolsuper from pg_roles where rolname = current_user')).toBe('t');
    expect(await server.psql("select rolsuper from pg_roles where rolname = 'ledger'")).toBe('f');
    const made =
      'create table calls (id int primary key); insert into calls values (1); select count(*) from calls';
    expect(await runPsql([server.url], made)).toBe('1');
    await runPsql([server.url], 'create database another');
    expect(await server.psql("select datdba::regrole from pg_database where datname = 'another'")).toBe(
      'ledger',
    );
  });

  it('stop() ends the server and every process of it, and removes its folder', async () => {
    const server = servers[1]!;
    const pids = [server.pid, ...childrenOf(server.pid)];
    expect(pids.length).toBeGreaterThan(1);
    await server.stop();
    expect(pids.filter(running)).toEqual([]);
    expect(existsSync(server.dir)).toBe(false);
    await server.stop();
  });

  it('stops when the test process dies without stopping it', async () => {
    const harness = join(PROJECT_ROOT, 'test/harness/postgres.ts');
    const script = `import { startPostgres } from ${JSON.stringify(harness)};
      const server = await startPostgres();
      console.log(JSON.stringify({ pid: server.pid, dir: server.dir }));
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const started = await new Promise<{ pid: number; dir: string }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(JSON.parse(out));
      });
      child.once('exit', (code) =>
        reject(new Error(`the test process exited (${code}) before the server started`)),
      );
    });
    try {
      expect(running(started.pid)).toBe(true);
      child.kill('SIGKILL');
      expect(await eventually(() => !running(started.pid), 5_000)).toBe(true);
    } finally {
      child.kill('SIGKILL');
      // The folder stays: only stop() and the cleanup after a test file remove it.
      rmSync(started.dir, { recursive: true, force: true });
    }
  });
});
