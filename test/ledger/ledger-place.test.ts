// The SQLite ledger's place, through the ledger's API: its folder made for the user alone; a folder
// others can write or another user owns refused; a FIFO, folder, device or symbolic link where the
// database file should be refused at once, saying what it is; a damaged database, or one of
// another version, refused with what to do; and a database another connection holds: a begin waits
// without blocking the event loop, then gives up, and an end that cannot be written never throws.
// Nothing here is sent when the ledger cannot record it: every refusal is LedgerUnavailable.

import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { LedgerUnavailable } from '../../src/ledger/ledger.js';
import { tempDir } from '../harness/harness.js';
import {
  afterSweep,
  chat,
  closeLedgers,
  DATABASE,
  exported,
  go,
  SQLITE,
  setup,
  sqliteRows,
} from './ledger-fixture.js';

afterEach(closeLedgers);

const IS_ROOT = process.getuid?.() === 0;

/** What a begin threw (it must throw), and how long it took. */
async function refusal(begin: Promise<unknown>): Promise<{ error: Error; ms: number }> {
  const started = performance.now();
  const error = await begin.then(
    (result) => new Error(`it did not throw: ${JSON.stringify(result)}`),
    (thrown: Error) => thrown,
  );
  return { error, ms: performance.now() - started };
}

describe('the ledger’s folder', () => {
  it('is made for the user alone when missing, and the database is writable by no one else', async () => {
    const dir = join(tempDir('gtm-ledger-'), 'a', 'ledger');
    const { ledger } = await setup(SQLITE, { place: { dir } });
    await go(ledger, chat('x'));
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, DATABASE)).mode & 0o022).toBe(0);
    expect(sqliteRows(dir)).toHaveLength(1);
  });

  it('is refused while others can write to it, saying to chmod go-w', async () => {
    const { ledger, place } = await setup(SQLITE);
    chmodSync(place.dir, 0o777);
    const { error } = await refusal(ledger.begin(chat('x')));
    expect(error).toBeInstanceOf(LedgerUnavailable);
    expect(error.message).toBe(
      `The ledger's folder ${place.dir} can be written by other users (mode 777), who could change what it records: chmod go-w ${place.dir}.`,
    );
    expect(readdirSync(place.dir)).toEqual([]);
    chmodSync(place.dir, 0o755);
    expect((await ledger.begin(chat('x'))).status).toBe('go');
  });

  it('refuses a database file others can write, saying to chmod go-w it', async () => {
    const { ledger, open, place } = await setup(SQLITE);
    await go(ledger, chat('x'));
    const file = join(place.dir, DATABASE);
    chmodSync(file, 0o666);
    const { error } = await refusal(open().begin(chat('y')));
    expect(error).toBeInstanceOf(LedgerUnavailable);
    expect(error.message).toMatch(/can be written by other users \(mode 666\)/);
    expect(error.message).toContain(`chmod go-w ${file}`);
    expect(sqliteRows(place.dir)).toHaveLength(1);
  });

  it.runIf(IS_ROOT)('is refused when it belongs to another user (as root: chown 65534)', async () => {
    const { ledger, place } = await setup(SQLITE);
    chownSync(place.dir, 65534, 65534);
    const { error } = await refusal(ledger.begin(chat('x')));
    expect(error).toBeInstanceOf(LedgerUnavailable);
    expect(error.message).toBe(
      `The ledger's folder ${place.dir} belongs to another user (uid 65534), who could change what it records: use a GATEWAY_LEDGER_DIR of this user's (uid 0), or chown it to this user.`,
    );
    expect(readdirSync(place.dir)).toEqual([]);
  });

  it('is refused below a file', async () => {
    const file = join(tempDir('gtm-ledger-'), 'a-file');
    writeFileSync(file, '');
    const { ledger } = await setup(SQLITE, { place: { dir: join(file, 'ledger') } });
    const { error } = await refusal(ledger.begin(chat('x')));
    expect(error).toBeInstanceOf(LedgerUnavailable);
    expect(error.message).toMatch(
      /^The ledger of billed calls at .*a-file\/ledger lies below a file, not a folder: /,
    );
  });
});

if (!IS_ROOT)
  console.warn('Not run: the ledger tests of a device file and of another user’s folder need root.');

describe('what is where the database file should be', () => {
  const target = join(tempDir('gtm-ledger-target-'), 'elsewhere.sqlite');
  writeFileSync(target, '');

  const fifo = (path: string) => expect(spawnSync('mkfifo', [path]).status).toBe(0);
  it.each([
    { name: 'ledger.sqlite', what: 'a FIFO', make: fifo },
    { name: 'ledger.sqlite', what: 'a folder', make: (path: string) => mkdirSync(path) },
    { name: 'ledger.sqlite', what: 'a symbolic link', make: (path: string) => symlinkSync(target, path) },
    { name: 'ledger.sqlite-wal', what: 'a FIFO', make: fifo },
  ])('refuses $what at $name within a second, saying what it is', async ({ name, what, make }) => {
    const { ledger, place } = await setup(SQLITE);
    const path = join(place.dir, name);
    make(path);
    const { error, ms } = await refusal(ledger.begin(chat('x')));
    expect(ms).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(LedgerUnavailable);
    expect(error.message).toBe(
      `The ledger's database file ${path} is ${what}, not a file: remove it (rm ${path}) and the ledger is made anew.`,
    );
    expect(readdirSync(place.dir)).toEqual([name]);
  });

  it.runIf(IS_ROOT)('refuses a device at ledger.sqlite within a second (as root: mknod)', async (context) => {
    const { ledger, place } = await setup(SQLITE);
    const path = join(place.dir, DATABASE);
    const made = spawnSync('mknod', [path, 'c', '1', '3']); // as /dev/null
    if (made.status !== 0) context.skip(`mknod is not allowed here: ${made.stderr}`);
    expect(lstatSync(path).isCharacterDevice()).toBe(true);
    const { error, ms } = await refusal(ledger.begin(chat('x')));
    expect(ms).toBeLessThan(1_000);
    expect(error).toBeInstanceOf(LedgerUnavailable);
    expect(error.message).toBe(
      `The ledger's database file ${path} is a device, not a file: remove it (rm ${path}) and the ledger is made anew.`,
    );
  });
});

describe('a database the ledger cannot use', () => {
  it('is refused when damaged, saying how to move it aside; moved aside, a new ledger starts', async () => {
    const { ledger: first, open, place } = await setup(SQLITE);
    await go(first, chat('before the damage'));
    await first.close();
    const file = join(place.dir, DATABASE);
    const garbage = Buffer.alloc(8192, 'not a database, just garbage ');
    writeFileSync(file, garbage);

    const ledger = open();
    const { error } = await refusal(ledger.begin(chat('after the damage')));
    expect(error).toBeInstanceOf(LedgerUnavailable);
    expect(error.message).toMatch(
      /^The ledger of billed calls \(.*\) is damaged \(.+\), so no billed call is sent: /,
    );
    expect(error.message).toContain(`move it aside (mv ${file} ${file}.damaged)`);
    expect(readFileSync(file)).toEqual(garbage); // nothing recorded, nothing repaired in place

    renameSync(file, `${file}.damaged`);
    await go(ledger, chat('on a new ledger'));
    expect(sqliteRows(place.dir).map((row) => row.words)).toEqual(['on a new ledger']);
  });

  it('is refused when another version of gateway-tools-mcp wrote it, the one before this too', async () => {
    const { ledger: first, open, place } = await setup(SQLITE);
    await go(first, chat('x'));
    await first.close();
    const db = new DatabaseSync(join(place.dir, DATABASE));
    db.exec('PRAGMA user_version = 3');
    db.close();
    const { error } = await refusal(open().begin(chat('y')));
    expect(error).toBeInstanceOf(LedgerUnavailable);
    expect(error.message).toContain(
      'was written by another version of gateway-tools-mcp (ledger version 3, this one reads 4)',
    );
    expect(sqliteRows(place.dir)).toHaveLength(1);
  });
});

describe('a database another connection holds (BEGIN IMMEDIATE)', () => {
  /** A connection of its own on the ledger's database, holding the writer's lock until released. */
  function hold(dir: string): { release(): void } {
    const db = new DatabaseSync(join(dir, DATABASE));
    db.exec('BEGIN IMMEDIATE');
    return {
      release() {
        db.exec('ROLLBACK');
        db.close();
      },
    };
  }

  it('makes a begin wait without blocking the event loop, then refuse: the ledger is busy', async () => {
    const { ledger, place } = await setup(SQLITE, { waitMs: 300 });
    await go(ledger, chat('before'));
    await afterSweep();
    const held = hold(place.dir);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    let refused: { error: Error; ms: number };
    try {
      refused = await refusal(ledger.begin(chat('while held')));
    } finally {
      clearInterval(timer);
      held.release();
    }
    expect(refused.error).toBeInstanceOf(LedgerUnavailable);
    expect(refused.error.message).toMatch(
      /^The ledger of billed calls \(.*ledger\.sqlite\) is held by another server process that has not let go for 300 ms \(stopped, or stuck\): try again shortly; if it stays busy, end the stuck gateway-tools-mcp process\.$/,
    );
    expect(refused.ms).toBeGreaterThanOrEqual(290);
    expect(refused.ms).toBeLessThan(2_000);
    expect(ticks).toBeGreaterThanOrEqual(10); // the timer ran all along: nothing blocked
    // Released: begins go again, and the refused one was never recorded.
    await go(ledger, chat('after'));
    expect((await exported(ledger)).map((c) => c.words)).toEqual(['before', 'after']);
  });

  it('lets an end it cannot write fail quietly: the call reads as unknown, and counts', async () => {
    const { ledger, place, warnings } = await setup(SQLITE, { waitMs: 200, limits: 'chat=1/day' });
    const id = await go(ledger, chat('x'));
    await afterSweep(); // the begin's sweep of old calls, done before the lock is taken
    const held = hold(place.dir);
    try {
      await expect(ledger.end(id, { outcome: 'accepted', amount: 5 })).resolves.toBeUndefined();
      await expect(ledger.noteJobStatus('job-1', 'completed')).resolves.toBeUndefined();
    } finally {
      held.release();
    }
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^ledger: could not record the end of call ${id} \\(.*held by another server process.*\\); it is listed as unknown$`,
        ),
      ),
      expect.stringMatching(
        /^ledger: could not record the status of job job-1 \(.*held by another server process.*\)$/,
      ),
    ]);
    expect(await exported(ledger)).toMatchObject([{ id, state: 'unknown', endedAt: null }]);
    expect(await ledger.begin(chat('y'))).toMatchObject({ status: 'limited', refusal: { used: 1 } });
  });
});
