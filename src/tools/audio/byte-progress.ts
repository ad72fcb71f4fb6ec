import { pipeline, type Readable, Transform } from 'node:stream';
import type { ToolContext } from '../define.js';

export type ByteProgress = (progress: number, total: number | undefined, message: string) => void;

const STEP_BYTES = 1024 * 1024;

/**
 * Progress notifications for long transfers (downloads, uploads), at most one per MiB so a
 * 200 MB upload sends a few hundred notifications, not thousands. Values only grow, as MCP asks.
 */
export function byteProgress(ctx: ToolContext): ByteProgress {
  let last = Number.NEGATIVE_INFINITY;
  return (progress, total, message) => {
    if (progress < last) return;
    if (progress - last < STEP_BYTES && progress !== total) return;
    last = progress;
    void ctx.progress({ progress, ...(total === undefined ? {} : { total }), message });
  };
}

/** Passes a stream through unchanged, reporting `offset + bytes so far` of `total`. */
export function countingStream(
  source: Readable,
  report: ByteProgress,
  offset: number,
  total: number,
  label: string,
): Readable {
  let sent = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      sent += chunk.length;
      report(offset + sent, total, `${label}: ${formatMiB(sent)} of ${formatMiB(total - offset)}`);
      callback(null, chunk);
    },
  });
  // pipeline (not pipe) so a read error reaches the consumer instead of stalling the upload.
  return pipeline(source, counter, () => undefined);
}

function formatMiB(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}
