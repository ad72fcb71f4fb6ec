import type { ServerResponse } from 'node:http';

/**
 * The `subscriptions/listen` streams of 2026-07-28 clients, held open for notifications. They
 * are bounded on their own, apart from the requests being served, so that however many are held
 * no call is ever refused for them: a client holds at most `perClient` (a new one ends its
 * oldest), all clients together at most `total` (a new one ends the one quiet longest), and a
 * stream that carried nothing for `idleMs` is ended. An ended stream is a normal end of the
 * response: a client that still wants notifications listens again.
 */
export class ListenStreams {
  private readonly held = new Map<ServerResponse, { client: string; since: number; lastSent: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly total: number,
    private readonly perClient: number,
    private readonly idleMs: number,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(250, Math.min(30_000, idleMs / 2)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.held.size;
  }

  /** Holds `res` as a listen stream of `client`, ending others first where a bound says so. */
  hold(res: ServerResponse, client: string): void {
    const own = [...this.held].filter(([, stream]) => stream.client === client);
    if (own.length >= this.perClient) this.end(oldest(own, 'since'));
    if (this.held.size >= this.total) this.end(oldest([...this.held], 'lastSent'));
    const now = Date.now();
    const stream = { client, since: now, lastSent: now };
    this.held.set(res, stream);
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    res.write = ((...args: unknown[]) => {
      stream.lastSent = Date.now();
      return write(...args);
    }) as typeof res.write;
    res.once('close', () => this.held.delete(res));
  }

  stop(): void {
    clearInterval(this.sweeper);
    for (const res of [...this.held.keys()]) this.end(res);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [res, stream] of this.held) if (now - stream.lastSent >= this.idleMs) this.end(res);
  }

  private end(res: ServerResponse | undefined): void {
    if (!res) return;
    this.held.delete(res);
    res.end();
  }
}

type Held = [ServerResponse, { since: number; lastSent: number }];

function oldest(streams: Held[], by: 'since' | 'lastSent'): ServerResponse | undefined {
  let found: Held | undefined;
  for (const entry of streams) if (!found || entry[1][by] < found[1][by]) found = entry;
  return found?.[0];
}

/** Whether a POST body opens a listen stream (the era's one long-lived request). */
export function opensListen(body: unknown): boolean {
  return (body as { method?: unknown } | null)?.method === 'subscriptions/listen';
}
