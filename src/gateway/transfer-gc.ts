// Keeps memory flat while a long transfer streams (video downloads, audio uploads and downloads).
//
// Every socket or file read allocates a fresh buffer of up to 64 KiB, and V8 returns the memory
// behind young buffers only at a scavenge. The allocations themselves force a scavenge only once
// 32 MiB of such memory is waiting (twice the default size of a V8 semi-space), and
// a transfer makes too little other garbage to trigger one sooner. So a 500 MB download held up
// to 32 MiB of dead buffers at any moment, plus what the allocator kept around them: measured
// +25-50 MiB of RSS in the server, whatever the file size. Asking for a minor GC every few MiB
// keeps the dead buffers to about twice that step (measured: at most 8-15 MiB of buffers alive at
// 4 MiB), and each costs well under a millisecond with this server's small young generation
// (about 125 of them for 500 MB).

export const GC_PACE_BYTES = 4 * 1024 * 1024;

type CollectGarbage = (options: { type: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

let collect: CollectGarbage | null | undefined;

/**
 * V8's `gc` function, obtained once. Node cannot be started with --expose-gc through the bin, so
 * the flag is set for the creation of one throwaway context and switched off again at once: no
 * other code ever sees a `gc` global. Null where that is not possible (pacing is then skipped).
 */
function garbageCollector(): CollectGarbage | null {
  if (collect !== undefined) return collect;
  const existing = (globalThis as { gc?: unknown }).gc;
  if (typeof existing === 'function') {
    collect = existing as CollectGarbage;
    return collect;
  }
  try {
    // Taken here, not imported: only a process that transfers a large file needs them.
    const { setFlagsFromString } = process.getBuiltinModule('node:v8');
    const { runInNewContext } = process.getBuiltinModule('node:vm');
    setFlagsFromString('--expose-gc');
    const exposed: unknown = runInNewContext('gc');
    collect = typeof exposed === 'function' ? (exposed as CollectGarbage) : null;
  } catch {
    collect = null;
  } finally {
    process.getBuiltinModule('node:v8').setFlagsFromString('--no-expose-gc');
  }
  return collect;
}

/** Returns a counter to call with each chunk's length; it asks for a minor GC every `everyBytes`. */
export function gcPacer(everyBytes = GC_PACE_BYTES): (bytes: number) => void {
  const gc = garbageCollector();
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < everyBytes || !gc) return;
    since = 0;
    gc({ type: 'minor', execution: 'sync' });
  };
}
