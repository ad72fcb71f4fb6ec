import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, rename, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { openInputFile, readUpTo } from '../../src/files/input-files.js';
import { saveStream } from '../../src/files/output-files.js';
import { UserError } from '../../src/lib/user-error.js';
import { tempDir } from '../harness/harness.js';

// A process that can write inside an input root or the output directory races the server:
// it swaps a directory for a symlink between the server's check and its open, or replaces a
// freshly created output file with a symlink before the server writes. Each test runs a bounded
// number of attempts against a concurrent swapper. The sequences these replaced (check a path,
// then open it again by name) lost such races hundreds of times per few thousand attempts.

const ATTEMPTS = 1000;
const BUDGET_MS = 4_000;
const nextTick = () => new Promise((r) => setImmediate(r));

/** Runs `swap` in a loop until the returned stop() is awaited, which says how many swaps landed. */
function keepSwapping(swap: () => Promise<void>): () => Promise<number> {
  let running = true;
  let landed = 0;
  const loop = (async () => {
    while (running) {
      await swap().then(
        () => landed++,
        () => undefined,
      );
      // Now and then the place stays as it should be for a moment, so the other side's attempts
      // also run to their end between swaps (on a loaded machine they could lose every race).
      await (landed % 4 === 0 ? sleep(1) : nextTick());
    }
  })();
  return async () => {
    running = false;
    await loop;
    return landed;
  };
}

describe('races on files', () => {
  it.runIf(process.platform === 'linux')(
    'an input file is never read from outside the roots, however a directory is swapped',
    async () => {
      const base = tempDir('gtm-race-in-');
      const root = join(base, 'root');
      const outside = join(base, 'outside');
      mkdirSync(join(root, 'dir'), { recursive: true });
      mkdirSync(outside);
      writeFileSync(join(root, 'dir', 'f.bin'), 'INSIDE');
      writeFileSync(join(outside, 'f.bin'), 'SECRET');
      const stop = keepSwapping(async () => {
        await rename(join(root, 'dir'), join(root, 'dir.real'));
        await symlink(outside, join(root, 'dir'));
        await nextTick();
        await unlink(join(root, 'dir'));
        await rename(join(root, 'dir.real'), join(root, 'dir'));
      });
      const read: string[] = [];
      const started = Date.now();
      let swaps = 0;
      try {
        for (let i = 0; (i < ATTEMPTS || read.length === 0) && Date.now() - started < BUDGET_MS; i++) {
          const opened = await openInputFile('dir/f.bin', [root], root, 100).catch(() => null);
          if (!opened) continue;
          read.push((await readUpTo(opened.handle, 100)).toString());
          await opened.handle.close();
        }
      } finally {
        swaps = await stop();
      }
      // The race ran: the swapper's swaps landed, and reads succeeded between them.
      expect(swaps, 'swaps that landed').toBeGreaterThan(0);
      expect(read.length, 'reads that succeeded').toBeGreaterThan(0);
      expect(read.filter((text) => text !== 'INSIDE')).toEqual([]);
      // Sanity: without the swapper the file is read.
      const opened = await openInputFile('dir/f.bin', [root], root, 100);
      expect((await readUpTo(opened.handle, 100)).toString()).toBe('INSIDE');
      await opened.handle.close();
    },
  );

  it.runIf(process.platform === 'linux')(
    'no file is ever created outside the working directory when the output directory is swapped for a symlink',
    async () => {
      // The rule (docs/security.md, finding 7): an output directory inside the working directory
      // must really be inside it. A symlink to another place inside it is followed, so the place
      // the swapper points at lies outside the working directory.
      const base = tempDir('gtm-race-outdir-');
      const work = join(base, 'work');
      const out = join(work, 'out');
      const outside = join(base, 'outside');
      mkdirSync(out, { recursive: true });
      mkdirSync(outside);
      const stop = keepSwapping(async () => {
        await rename(out, `${out}.real`);
        await symlink(outside, out);
        await nextTick();
        await unlink(out);
        await rename(`${out}.real`, out);
      });
      const save = () =>
        saveStream(
          Readable.from([Buffer.from('FROM-THE-GATEWAY')]),
          { outputDir: out, stem: 'speech', extension: 'mp3', workDir: work },
          100,
        );
      // Attempts that got as far as a decision: saved, or refused by a guard. Under load the
      // swapper can win every race (the directory is missing, or moved, at some step of each
      // attempt); those attempts decide nothing and are not counted.
      let decided = 0;
      const started = Date.now();
      try {
        for (let i = 0; i < ATTEMPTS && Date.now() - started < BUDGET_MS; i++) {
          await save().then(
            () => decided++,
            (error: Error) => {
              if (
                /changed while a file was being (created|saved)|leads outside the working directory/.test(
                  error.message,
                )
              )
                decided++;
            },
          );
        }
      } finally {
        await stop();
      }
      expect(await readdir(outside)).toEqual([]);
      expect(decided).toBeGreaterThan(0);
      // Sanity: without the swapper the file is saved, in the output directory.
      const saved = await save();
      expect(readFileSync(saved.path, 'utf8')).toBe('FROM-THE-GATEWAY');
      expect(saved.path.startsWith(out)).toBe(true);
    },
  );

  it('a saved file is never written through a symlink planted in the output directory', async () => {
    const base = tempDir('gtm-race-out-');
    const out = join(base, 'out');
    mkdirSync(out);
    const victim = join(base, 'victim.txt');
    writeFileSync(victim, 'ORIGINAL');
    const replaced = new Set<string>();
    const stop = keepSwapping(async () => {
      for (const name of await readdir(out)) {
        if (replaced.has(name)) continue;
        replaced.add(name);
        await unlink(join(out, name));
        await symlink(victim, join(out, name));
      }
    });
    const started = Date.now();
    try {
      for (let i = 0; i < ATTEMPTS && Date.now() - started < BUDGET_MS; i++) {
        // A name swapped after it was published is found out, and the save refused.
        await saveStream(
          Readable.from([Buffer.from('FROM-THE-GATEWAY')]),
          { outputDir: out, stem: 'speech', extension: 'mp3' },
          100,
        ).catch((error: Error) => {
          if (!(error instanceof UserError)) throw error;
        });
      }
    } finally {
      await stop();
    }
    expect(replaced.size).toBeGreaterThan(0);
    expect(readFileSync(victim, 'utf8')).toBe('ORIGINAL');
  });
});
