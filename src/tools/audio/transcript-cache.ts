import { existsSync } from 'node:fs';
import type { TranscriptFormat } from '../../gateway/endpoints/audio.js';
import { perRuntime, type Runtime } from '../../runtime.js';
import { SharedCache } from '../../shared-state/shared-cache.js';

export interface CachedTranscript {
  text: string;
  model: string;
  /** What the provider delivered (may differ from what was asked). */
  format: TranscriptFormat;
  /** The saved file (subtitles, verbose JSON, or the full text of a long transcript), if any. */
  filePath: string | null;
  /** A short name of the source, for saved file names. */
  sourceName: string;
}

const TTL_MS = 30 * 60_000;
const MAX_ENTRIES = 16;
const MAX_TOTAL_CHARS = 8_000_000;

/**
 * Finished transcriptions, so paging through a long transcript (start_index) never uploads and
 * pays again. Keyed by what makes a transcription the same: the source's identity (file path +
 * size + mtime, URL, or the hash of the base64 data), model, language, prompt and format.
 * Bounded by entry count, total characters and age. Only finished results are stored, so a
 * cancelled call cancels its own upload and leaves nothing behind.
 */
export class TranscriptCache {
  private readonly entries = new Map<string, { at: number; value: CachedTranscript }>();

  constructor(
    private readonly ttlMs = TTL_MS,
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxChars = MAX_TOTAL_CHARS,
  ) {}

  static key(parts: readonly (string | undefined)[]): string {
    return JSON.stringify(parts.map((p) => p ?? null));
  }

  get(key: string): CachedTranscript | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    if (Date.now() - hit.at >= this.ttlMs) return undefined;
    this.entries.set(key, hit); // re-insert: Map order is the LRU order
    return hit.value;
  }

  set(key: string, value: CachedTranscript): void {
    this.entries.delete(key);
    this.entries.set(key, { at: Date.now(), value });
    let total = 0;
    for (const { value: v } of this.entries.values()) total += v.text.length;
    for (const [k, { value: v }] of this.entries) {
      if (this.entries.size <= this.maxEntries && total <= this.maxChars) break;
      if (k === key) break; // always keep the newest, whatever its size
      this.entries.delete(k);
      total -= v.text.length;
    }
  }

  /** Forgets every entry. */
  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/** The process's finished transcriptions, shared by every session of `runtime`. */
export const transcriptsOf = perRuntime(() => new TranscriptCache());

/** Transcripts made by any process sharing the ledger: 16 MiB of them at most, as long as in the process. */
export const sharedTranscriptsOf = perRuntime(
  (runtime) =>
    new SharedCache<CachedTranscript>(() => runtime.ledger().database(), {
      space: 'transcripts',
      ttlMs: TTL_MS,
      maxBytes: 16 * 2 ** 20,
    }),
);

/**
 * The transcript made of `key`, by this process or by another sharing the ledger. A saved file
 * another process named that cannot be read here (an output folder not shared) is left out: it is
 * saved again here when needed. The store not answering is a miss.
 */
export async function cachedTranscript(runtime: Runtime, key: string): Promise<CachedTranscript | undefined> {
  const here = transcriptsOf(runtime).get(key);
  if (here) return here;
  const shared = await sharedTranscriptsOf(runtime)
    .get(key)
    .catch(() => undefined);
  if (!shared) return undefined;
  if (shared.filePath && !existsSync(shared.filePath)) shared.filePath = null;
  transcriptsOf(runtime).set(key, shared);
  return shared;
}

/** Keeps a transcript (again, once its file is saved) for this process and the others. */
export async function keepTranscript(
  runtime: Runtime,
  key: string,
  transcript: CachedTranscript,
): Promise<void> {
  transcriptsOf(runtime).set(key, transcript);
  await sharedTranscriptsOf(runtime)
    .set(key, transcript)
    .catch((error: unknown) =>
      runtime.log.debug(`the transcript was not shared with other processes: ${(error as Error).message}`),
    );
}
