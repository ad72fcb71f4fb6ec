// The ledger on a hostile machine, through the front door (an SDK client, in memory, against the
// reference service; doctor as the built CLI): a cost limit is not passed by calls whose cost is
// unknown; a FIFO, a device or a folder where the database should be, a ledger folder other users
// can write or that is not this user's, a damaged database and a read-only file system are each
// refused at once with what to do, and nothing reaches the gateway; a FUSE file system is warned
// about. The cases that need root (chown, mount) or bindfs run where they can and say so elsewhere.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { useReferenceService } from '../harness/gateway.js';
import { type Connected, connectInMemory, runCli, SERVER_NODE, tempDir, textOf } from '../harness/harness.js';
import { ledgerCalls } from '../harness/ledger.js';
import { submitsOf } from '../harness/video.js';

const reference = useReferenceService();
const IS_ROOT = process.getuid?.() === 0;
const CAN_MOUNT = IS_ROOT && spawnSync('mount', ['--version']).status === 0;
const HAS_BINDFS = IS_ROOT && spawnSync('bindfs', ['--version']).status === 0;

if (!IS_ROOT)
  console.warn(
    'Not run: the ledger tests of folders owned by another user, of read-only file systems and of a full disk need root (chown, mount).',
  );
if (IS_ROOT && !HAS_BINDFS)
  console.warn(
    'Not run: the ledger test on a FUSE file system needs bindfs. Install it (Debian, as root) with: apt-get update && apt-get install -y bindfs',
  );

function serverNodeMajor(): number {
  return Number(
    execFileSync(SERVER_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' }).split('.')[0],
  );
}

async function server(env: Record<string, string>): Promise<Connected> {
  reference.service.reset();
  return connectInMemory({
    ...reference.env,
    GATEWAY_SEARCH_MODEL: 'tavily',
    CWD: tempDir('gtm-hostile-'),
    ...env,
  });
}

async function call(conn: Connected, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await conn.client.callTool({ name, arguments: args })) as CallToolResult;
}

function searchesSent(): number {
  return reference.service.requests.filter((r) => r.route.startsWith('search')).length;
}

/** A search through a server on this ledger folder: its result, how long it took, what reached the gateway. */
async function searchOn(dir: string): Promise<{ text: string; isError: boolean; ms: number; sent: number }> {
  const conn = await server({ GATEWAY_LEDGER_DIR: dir });
  try {
    const started = performance.now();
    const result = await call(conn, 'web_search', { query: 'a search the ledger must hold back' });
    return {
      text: textOf(result),
      isError: result.isError === true,
      ms: performance.now() - started,
      sent: searchesSent(),
    };
  } finally {
    await conn.close();
  }
}

describe('a cost limit and calls whose cost is unknown before sending', () => {
  const env = {
    GATEWAY_PRICES: 'xai/grok-imagine-video=0.05/second',
    GATEWAY_LIMITS: 'cost=1.00/day',
  };

  it('sends no video without duration under a cost limit, and says to pass it', async () => {
    const conn = await server({ ...env, GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-') });
    try {
      for (let i = 0; i < 30; i++) {
        const result = await call(conn, 'video_generate', {
          prompt: `a default video ${i}`,
          wait_seconds: 0,
        });
        expect(result.isError).toBe(true);
        expect(textOf(result)).toBe(
          "Not sent, and nothing billed: the shared limit cost=1.00/day (GATEWAY_LIMITS) needs this call's estimated cost, and without duration it cannot be known before sending (xai/grok-imagine-video=0.05/second in GATEWAY_PRICES). Pass duration to have it checked against the limit.",
        );
      }
      expect(submitsOf(reference.service)).toHaveLength(0);
    } finally {
      await conn.close();
    }
  });

  it('lets videos with a duration through until the estimated cost reaches the limit', async () => {
    const dir = tempDir('gtm-ledger-');
    const conn = await server({ ...env, GATEWAY_LEDGER_DIR: dir });
    try {
      const outcomes: boolean[] = [];
      for (let i = 0; i < 5; i++) {
        const result = await call(conn, 'video_generate', {
          prompt: `a six second video ${i}`,
          duration: 6,
          wait_seconds: 0,
        });
        outcomes.push(result.isError === true);
        if (result.isError)
          expect(textOf(result)).toMatch(/^Not sent, and nothing billed: the shared limit cost=1.00\/day/);
      }
      // 0.30 each: three make 0.90, a fourth would make 1.20.
      expect(outcomes).toEqual([false, false, false, true, true]);
      expect(submitsOf(reference.service)).toHaveLength(3);
      expect(ledgerCalls(dir).map((c) => c.end?.outcome)).toEqual([
        'accepted',
        'accepted',
        'accepted',
        'declined',
        'declined',
      ]);
    } finally {
      await conn.close();
    }
  });
});

describe('a ledger place that is not what it should be', () => {
  it('refuses at once a FIFO, a folder or a device where the database should be', async () => {
    const cases: [string, (path: string) => void][] = [
      ['a FIFO', (path) => execFileSync('mkfifo', [path])],
      ['a folder', (path) => mkdirSync(path)],
    ];
    if (IS_ROOT) cases.push(['a device', (path) => execFileSync('mknod', [path, 'c', '1', '3'])]);
    for (const [kind, make] of cases) {
      const dir = tempDir('gtm-ledger-');
      const database = join(dir, 'ledger.sqlite');
      make(database);
      const search = await searchOn(dir);
      expect(search.isError).toBe(true);
      expect(search.text).toBe(
        `Not sent, and nothing billed: the ledger's database file ${database} is ${kind}, not a file: remove it (rm ${database}) and the ledger is made anew.`,
      );
      expect(search.ms).toBeLessThan(1000);
      expect(search.sent).toBe(0);
    }
  });

  it('refuses a ledger folder other users can write, and doctor says ✗ with the fix', async () => {
    const dir = tempDir('gtm-ledger-');
    chmodSync(dir, 0o777);
    const search = await searchOn(dir);
    expect(search.isError).toBe(true);
    expect(search.text).toBe(
      `Not sent, and nothing billed: the ledger's folder ${dir} can be written by other users (mode 777), who could change what it records: chmod go-w ${dir}.`,
    );
    expect(search.sent).toBe(0);
    const doctor = await runCli(['doctor'], { ...reference.env, GATEWAY_LEDGER_DIR: dir });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(
      `✗ The ledger's folder ${dir} can be written by other users (mode 777), who could change what it records\n    fix: Chmod go-w ${dir}: a billed call the ledger cannot record is not sent.\n`,
    );
  });

  it.skipIf(!IS_ROOT)('refuses a ledger folder or database that belongs to another user', async () => {
    const dir = tempDir('gtm-ledger-');
    chownSync(dir, 65534, 65534);
    const search = await searchOn(dir);
    expect(search.text).toBe(
      `Not sent, and nothing billed: the ledger's folder ${dir} belongs to another user (uid 65534), who could change what it records: use a GATEWAY_LEDGER_DIR of this user's (uid 0), or chown it to this user.`,
    );
    chownSync(dir, 0, 0);
    const database = join(dir, 'ledger.sqlite');
    writeFileSync(database, '');
    chownSync(database, 65534, 65534);
    expect((await searchOn(dir)).text).toMatch(
      new RegExp(
        `^Not sent, and nothing billed: the ledger's file ${database} belongs to another user \\(uid 65534\\)`,
      ),
    );
    expect(searchesSent()).toBe(0);
  });

  it('refuses every billed call while the database is damaged, and says how to start a new one', async () => {
    const dir = tempDir('gtm-ledger-');
    const database = join(dir, 'ledger.sqlite');
    writeFileSync(database, Buffer.alloc(8192, 'not a database '));
    const search = await searchOn(dir);
    expect(search.text).toBe(
      `Not sent, and nothing billed: the ledger of billed calls (${database}) is damaged (file is not a database), so no billed call is sent: move it aside (mv ${database} ${database}.damaged) and the next call starts a new, empty ledger.`,
    );
    expect(search.sent).toBe(0);
  });
});

describe.skipIf(!CAN_MOUNT)('a ledger on a read-only file system', () => {
  const mounts: string[] = [];
  afterAll(() => {
    for (const mount of mounts) spawnSync('umount', [mount]);
  });

  it('is said as read-only, when the folder cannot be made and when the file system turns read-only', async () => {
    const mount = tempDir('gtm-rofs-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', mount]);
    mounts.push(mount);
    const dir = join(mount, 'ledger');
    const first = await searchOn(dir);
    expect(first.isError).toBe(false);
    execFileSync('mount', ['-o', 'remount,ro', mount]);
    const after = await searchOn(dir);
    expect(after.isError).toBe(true);
    expect(after.text).toMatch(
      new RegExp(
        `^Not sent, and nothing billed: the ledger of billed calls at ${dir}.* is on a read-only file system: `,
      ),
    );
    expect(after.sent).toBe(0);
    const unmade = await searchOn(join(mount, 'another'));
    expect(unmade.text).toBe(
      `Not sent, and nothing billed: the ledger of billed calls at ${join(mount, 'another')} is on a read-only file system: set GATEWAY_LEDGER_DIR to a folder this user can write on a local disk.`,
    );
    // Reading it still works where Node's SQLite opens it as immutable (Node 23 and later); on
    // Node 22 the report says why it cannot.
    const usage = await runCli(['usage', '--json'], { GATEWAY_LEDGER_DIR: dir });
    if (serverNodeMajor() >= 23) {
      expect(usage.code, usage.stderr).toBe(0);
      expect(JSON.parse(usage.stdout).periods.day.calls.search).toBe(1);
    } else {
      expect(usage.stderr).toBe(
        `gateway-tools-mcp: The ledger of billed calls at ${dir} is on a read-only file system: set GATEWAY_LEDGER_DIR to a folder this user can write on a local disk.\n`,
      );
    }
  });
});

describe.runIf(CAN_MOUNT || process.env.CI === 'true')('a ledger on a full disk', () => {
  const mounts: string[] = [];
  afterAll(() => {
    for (const mount of mounts) spawnSync('umount', [mount]);
  });

  it('is said as full, with the folder and what to do, by the refusal and by doctor', async () => {
    if (!CAN_MOUNT)
      throw new Error('Cannot run under CI: the full-disk ledger test mounts a tmpfs, which needs root.');
    const mount = tempDir('gtm-full-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', mount]);
    mounts.push(mount);
    const dir = join(mount, 'ledger');
    const conn = await server({ GATEWAY_LEDGER_DIR: dir });
    try {
      const search = (query: string) => call(conn, 'web_search', { query });
      expect((await search('a search with room on the disk')).isError).toBeFalsy();
      // Everything left taken by another file, as a disk fills up under a running server.
      const { bavail, bsize } = statfsSync(mount);
      try {
        writeFileSync(join(mount, 'filler'), Buffer.alloc(bavail * bsize));
      } catch {
        // ENOSPC once the disk is full: the point
      }
      const sent = searchesSent();
      const refused = await search('a search on a full disk');
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(
        new RegExp(
          `^Not sent, and nothing billed: the ledger of billed calls at ${dir} is on a full disk \\(\\d+ KiB free\\), so no billed call can be recorded or sent: free space on that disk \\(df ${dir} shows it\\), or set GATEWAY_LEDGER_DIR to a folder on another disk\\.$`,
        ),
      );
      expect(searchesSent()).toBe(sent);
    } finally {
      await conn.close();
    }
    // A server started once the disk is full says the same.
    const fresh = await searchOn(dir);
    expect(fresh.text).toMatch(
      new RegExp(`^Not sent, and nothing billed: the ledger of billed calls at ${dir} is on a full disk`),
    );
    expect(fresh.sent).toBe(0);
    const doctor = await runCli(['doctor'], { ...reference.env, GATEWAY_LEDGER_DIR: dir });
    expect(doctor.stdout).toMatch(
      new RegExp(
        `✗ The ledger of billed calls at ${dir} is on a full disk \\(\\d+ KiB free\\), so no billed call can be recorded or sent\\n    fix: Free space on that disk \\(df ${dir} shows it\\), or set GATEWAY_LEDGER_DIR to a folder on another disk: a billed call the ledger cannot record is not sent\\.`,
      ),
    );
  });
});

describe.skipIf(!HAS_BINDFS)('a ledger on a FUSE file system', () => {
  const mounts: string[] = [];
  afterAll(() => {
    for (const mount of mounts) spawnSync('umount', [mount]);
  });

  it('works, with a warning that SQLite may not be safe there, and doctor warns with the fix', async () => {
    const source = tempDir('gtm-fuse-src-');
    const mount = tempDir('gtm-fuse-');
    execFileSync('bindfs', [source, mount]);
    mounts.push(mount);
    const dir = join(mount, 'ledger');
    const conn = await server({ GATEWAY_LEDGER_DIR: dir });
    try {
      const result = await call(conn, 'web_search', { query: 'a search on fuse' });
      expect(result.isError, textOf(result)).toBeFalsy();
    } finally {
      await conn.close();
    }
    const doctor = await runCli(['doctor'], { ...reference.env, GATEWAY_LEDGER_DIR: dir });
    expect(doctor.stdout).toMatch(
      new RegExp(
        `! Ledger of billed calls writable: ${dir}; the ledger's folder ${dir} is on a FUSE file system, where SQLite's locks may not hold if it reaches another machine \\(sshfs, a cloud drive\\)\\n    fix: Put GATEWAY_LEDGER_DIR on a local disk, or set GATEWAY_LEDGER_URL to a PostgreSQL database\\.`,
      ),
    );
  });
});
