// Temporary files and directories that must not outlive the process: every way the server ends
// (stdin closing, SIGINT/SIGTERM, an HTTP shutdown past its grace) goes through process.exit,
// whose `exit` event removes whatever is still registered, synchronously, as that event requires.

import { rmSync } from 'node:fs';

const pending = new Set<string>();
let hooked = false;

/** Removes `path` when the process exits, unless the returned function is called first. */
export function removeOnExit(path: string): () => void {
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const leftover of pending) rmSync(leftover, { recursive: true, force: true });
    });
  }
  pending.add(path);
  return () => {
    pending.delete(path);
  };
}
