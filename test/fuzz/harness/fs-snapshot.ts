import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every entry under a directory with what would change if it were written, created or replaced. */
export type FsSnapshot = Map<string, string>;

export function snapshotTree(root: string, skip: readonly string[] = []): FsSnapshot {
  const out: FsSnapshot = new Map();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (skip.includes(path)) continue;
      const info = lstatSync(path);
      const kind = info.isSymbolicLink()
        ? `link->${readlinkSync(path)}`
        : info.isDirectory()
          ? 'dir'
          : info.isFile()
            ? 'file'
            : 'other';
      out.set(relative(root, path), `${kind} ${info.size} ${info.mtimeMs} ${info.ino}`);
      if (info.isDirectory()) walk(path);
    }
  };
  walk(root);
  return out;
}

/** Human-readable differences between two snapshots (empty when equal). */
export function snapshotDiff(before: FsSnapshot, after: FsSnapshot): string[] {
  const diff: string[] = [];
  for (const [path, sig] of after) {
    const was = before.get(path);
    if (was === undefined) diff.push(`created ${path}`);
    else if (was !== sig) diff.push(`changed ${path} (${was} -> ${sig})`);
  }
  for (const path of before.keys()) if (!after.has(path)) diff.push(`removed ${path}`);
  return diff;
}
