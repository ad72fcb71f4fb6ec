import { perRuntime } from '../../runtime.js';
import { SharedCache } from '../../shared-state/shared-cache.js';

/**
 * Recently fetched pages, so paging through a long page (start_index) does not fetch and pay
 * again. Bounded by entry count, total characters and age; identical concurrent fetches share
 * one request. Kept twice: in the process (PageCache), and in the ledger's database for every
 * process sharing it (sharedPagesOf), so that the next part served by another replica is not
 * fetched and paid for again.
 */
export interface CachedPage {
  url: string;
  title: string | null;
  provider: string;
  text: string;
  /** When the gateway fetched it (ISO time): a copy from either cache keeps its first fetch's. */
  fetched_at?: string;
  /** The address the gateway says it read, when that is not the one asked for (a redirect). */
  final_url?: string | null;
}

const TTL_MS = 5 * 60_000;
const MAX_ENTRIES = 32;
const MAX_TOTAL_CHARS = 24_000_000;

interface Entry {
  at: number;
  chars: number;
  page: Promise<CachedPage>;
}

export class PageCache {
  private readonly entries = new Map<string, Entry>();
  private totalChars = 0;

  constructor(
    private readonly ttlMs = TTL_MS,
    private readonly maxEntries = MAX_ENTRIES,
    private readonly maxChars = MAX_TOTAL_CHARS,
  ) {}

  static key(provider: string, format: string, url: string): string {
    return `${provider}\n${format}\n${url}`;
  }

  /** Returns the cached page, or loads it once (concurrent callers share the load). */
  get(key: string, load: () => Promise<CachedPage>): Promise<CachedPage> {
    const hit = this.entries.get(key);
    if (hit && Date.now() - hit.at < this.ttlMs) {
      this.entries.delete(key); // re-insert: Map order is the LRU order
      this.entries.set(key, hit);
      return hit.page;
    }
    if (hit) this.remove(key);
    const entry: Entry = { at: Date.now(), chars: 0, page: load() };
    this.entries.set(key, entry);
    entry.page.then(
      (page) => {
        if (this.entries.get(key) !== entry) return;
        entry.chars = page.text.length;
        this.totalChars += entry.chars;
        this.evict();
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return entry.page;
  }

  /** Keeps `page` under `key` in place of any entry there (a page fetched again). */
  put(key: string, page: CachedPage): void {
    this.remove(key);
    this.entries.set(key, { at: Date.now(), chars: page.text.length, page: Promise.resolve(page) });
    this.totalChars += page.text.length;
    this.evict();
  }

  /** Forgets every entry. */
  clear(): void {
    this.entries.clear();
    this.totalChars = 0;
  }

  get size(): number {
    return this.entries.size;
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.totalChars -= entry.chars;
    this.entries.delete(key);
  }

  private evict(): void {
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.totalChars <= this.maxChars) return;
      if (this.entries.size === 1) return; // always keep the newest page, whatever its size
      this.remove(key);
    }
  }
}

/** The process's page cache, shared by every session of `runtime`. */
export const pagesOf = perRuntime(() => new PageCache());

/** Pages fetched by any process sharing the ledger: 64 MiB of them at most, as long as in the process. */
export const sharedPagesOf = perRuntime(
  (runtime) =>
    new SharedCache<CachedPage>(() => runtime.ledger().database(), {
      space: 'pages',
      ttlMs: TTL_MS,
      maxBytes: 64 * 2 ** 20,
    }),
);
