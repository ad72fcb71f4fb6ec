import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isInside, resolveInputFile, sniffImageMime } from '../../src/files/files.js';
import { saveStream, saveText } from '../../src/files/output-files.js';
import { UserError } from '../../src/lib/user-error.js';
import { tempDir } from '../harness/harness.js';

function layout() {
  const base = tempDir('gtm-files-');
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  mkdirSync(join(root, 'sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'sub', 'ok.txt'), 'hello');
  writeFileSync(join(outside, 'secret.txt'), 'secret');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'escape.txt'));
  symlinkSync(outside, join(root, 'escape-dir'));
  return { base, root, outside };
}

describe('input roots', () => {
  it('reads a file inside a root, relative or absolute', async () => {
    const { root } = layout();
    expect((await resolveInputFile('sub/ok.txt', [root], root, 100)).size).toBe(5);
    expect((await resolveInputFile(join(root, 'sub/ok.txt'), [root], '/', 100)).name).toBe('ok.txt');
  });

  it('refuses traversal, symlink escapes, directories, missing and oversize files', async () => {
    const { root, outside } = layout();
    const cases: [string, RegExp][] = [
      ['../outside/secret.txt', /outside the allowed input roots/],
      [join(outside, 'secret.txt'), /outside the allowed input roots/],
      ['escape.txt', /outside the allowed input roots/],
      ['escape-dir/secret.txt', /outside the allowed input roots/],
      ['sub', /not a regular file/],
      ['nope.txt', /No such file/],
      ['sub/ok.txt\0', /NUL/],
    ];
    for (const [path, message] of cases) {
      await expect(resolveInputFile(path, [root], root, 100), path).rejects.toThrow(message);
    }
    await expect(resolveInputFile('sub/ok.txt', [root], root, 4)).rejects.toThrow(/limit is 4 B/);
    await expect(resolveInputFile('sub/ok.txt', [root], root, 4)).rejects.toBeInstanceOf(UserError);
  });

  it('treats a sibling with a common prefix as outside', () => {
    expect(isInside('/a/rootx/f', '/a/root')).toBe(false);
    expect(isInside('/a/root/f', '/a/root')).toBe(true);
    expect(isInside('/a/root', '/a/root')).toBe(true);
  });
});

describe('output directory', () => {
  it('creates collision-free names inside the directory', async () => {
    const out = join(tempDir(), 'out');
    const paths = await Promise.all(
      Array.from({ length: 5 }, () =>
        saveText('x', { outputDir: out, stem: '../../etc/Passwd', extension: 'mp3' }),
      ),
    );
    expect(new Set(paths).size).toBe(5);
    for (const p of paths) {
      expect(dirname(p)).toBe(out);
      expect(p).toMatch(/passwd-\d{8}-\d{6}(-\d+)?\.mp3$/);
    }
    expect(readdirSync(out)).toHaveLength(5);
  });

  it('streams into a file and removes it when the limit is passed', async () => {
    const out = join(tempDir(), 'out');
    const saved = await saveStream(
      Readable.from([Buffer.from('abc'), Buffer.from('def')]),
      { outputDir: out, stem: 'x', extension: 'bin' },
      10,
    );
    expect(saved.bytes).toBe(6);
    expect(readFileSync(saved.path, 'utf8')).toBe('abcdef');
    await expect(
      saveStream(
        Readable.from([Buffer.alloc(8), Buffer.alloc(8)]),
        { outputDir: out, stem: 'big', extension: 'bin' },
        10,
      ),
    ).rejects.toThrow(/exceeds the 10 B limit/);
    expect(readdirSync(out)).toEqual([saved.path.split('/').at(-1)]);
    expect(existsSync(saved.path)).toBe(true);
  });
});

describe('image sniffing', () => {
  it('recognises png, jpeg, gif and webp and nothing else', () => {
    expect(sniffImageMime(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]))).toBe(
      'image/png',
    );
    expect(sniffImageMime(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffImageMime(Buffer.from('GIF89a...'))).toBe('image/gif');
    expect(sniffImageMime(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffImageMime(Buffer.from('%PDF-1.7'))).toBeNull();
  });
});
