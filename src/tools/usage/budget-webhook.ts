// GATEWAY_BUDGET_WEBHOOK: a POST to the operator's URL when a billed call takes a limit (a
// person's, or everyone's) past 80 % or 100 % of what it allows. The ledger finds the crossings in
// the begin's transaction, so each is found by exactly one call, in one process, however many
// share the ledger: one event per person, limit, window and share.
//
// The POST is signed (HMAC-SHA256 of `<timestamp>.<body>` with GATEWAY_BUDGET_WEBHOOK_SECRET, in
// X-Gateway-Signature) and carries no secret: the limit, its use, the person's id and times, never
// a prompt, a key or the URL. It is sent beside the call, never awaited by it: a slow or failing
// receiver never holds a billed call up. A network failure, a timeout, 408, 429 or 5xx is tried
// again after a pause (none once the server is stopping, which waits for them up to a bound), a
// few times, with the same event id (X-Gateway-Event, and `id` in the
// body), so a receiver that keeps the ids it has taken takes each crossing once even when an
// answer was lost on the way back.

import { createHash, createHmac } from 'node:crypto';
import type { Crossing } from '../../ledger/ledger.js';
import type { Logger } from '../../lib/log.js';

/** What a receiver is told. */
export interface BudgetEvent {
  /** The same on every attempt of one crossing. */
  id: string;
  type: 'budget.threshold';
  /** When the call that crossed it began (ISO). */
  at: string;
  /** 80: the limit is nearly used up; 100: used up, the next call like it is refused. */
  share: 80 | 100;
  setting: Crossing['setting'];
  /** For GATEWAY_LIMITS_PER_USER the person whose limit it is; for GATEWAY_LIMITS, who crossed it. */
  person: string;
  limit: string;
  period: Crossing['limit']['period'];
  used: number;
  max: number;
  left: number;
  /** When more is possible (ISO); null for a session's limit. */
  until: string | null;
}

export interface WebhookOptions {
  url: string;
  secret: string;
  log: Logger;
  /** The pauses before each new attempt: as many attempts again. */
  delaysMs?: readonly number[];
  timeoutMs?: number;
}

const DELAYS_MS = [1_000, 5_000, 30_000];
const RETRIED = (status: number) => status === 408 || status === 429 || status >= 500;

export function budgetEvent(crossing: Crossing, person: string, callId: string, at: number): BudgetEvent {
  const { limit, setting, share, used, left, until } = crossing;
  const id = createHash('sha256')
    .update(JSON.stringify([callId, setting, limit.text, share]))
    .digest('hex');
  return {
    id: id.slice(0, 32),
    type: 'budget.threshold',
    at: new Date(at).toISOString(),
    share,
    setting,
    person,
    limit: limit.text,
    period: limit.period,
    used: Math.round(used * 1e6) / 1e6,
    max: limit.max,
    left: Math.round(left * 1e6) / 1e6,
    until,
  };
}

/** How long a stopping server waits for deliveries under way. */
const FLUSH_MS = 10_000;

export class BudgetWebhook {
  private readonly pending = new Set<Promise<void>>();
  /** Set when the server stops: the pauses before retries are cut short. */
  private hurry: (() => void) | undefined;
  private readonly hurried = new Promise<void>((resolve) => {
    this.hurry = resolve;
  });

  constructor(private readonly options: WebhookOptions) {}

  /** Sends the event in the background: it never throws, and never holds the call up. */
  send(event: BudgetEvent): void {
    const delivery = this.deliver(event);
    this.pending.add(delivery);
    void delivery.finally(() => this.pending.delete(delivery));
  }

  /**
   * Lets the deliveries under way finish as the server stops, their retries without pauses, for
   * at most `boundMs`; one still undelivered then is said in the log.
   */
  async flush(boundMs = FLUSH_MS): Promise<void> {
    this.hurry?.();
    if (this.pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), boundMs);
    });
    const late = await Promise.race([Promise.all(this.pending).then(() => 'done' as const), bound]);
    clearTimeout(timer);
    if (late === 'late')
      this.options.log.warn(
        `budget webhook: ${this.pending.size} event(s) not delivered before the server stopped`,
      );
  }

  private async deliver(event: BudgetEvent): Promise<void> {
    const { url, secret, log, delaysMs = DELAYS_MS, timeoutMs = 10_000 } = this.options;
    const body = JSON.stringify(event);
    let failure = '';
    for (let attempt = 0; attempt <= delaysMs.length; attempt++) {
      if (attempt > 0) await this.pause(delaysMs[attempt - 1] ?? 0);
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-gateway-event': event.id,
            'x-gateway-timestamp': timestamp,
            'x-gateway-signature': `sha256=${signature}`,
          },
          body,
          redirect: 'manual',
          signal: AbortSignal.timeout(timeoutMs),
        });
        await response.body?.cancel();
        if (response.status < 300) return;
        failure = `HTTP ${response.status}`;
        if (!RETRIED(response.status)) break;
      } catch (error) {
        failure = (error as Error).name === 'TimeoutError' ? 'no answer in time' : 'no connection';
      }
    }
    // The URL is not named: its path may be its key.
    log.warn(`budget webhook: the ${event.share} % event of ${event.limit} was not delivered (${failure})`);
  }

  /** A pause before a retry, cut short when the server stops. */
  private pause(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
        timer.unref();
      }),
      this.hurried,
    ]).finally(() => clearTimeout(timer));
  }
}

const webhooks = new WeakMap<object, BudgetWebhook>();

/** The server's webhook, made on first use; undefined without GATEWAY_BUDGET_WEBHOOK. */
export function budgetWebhookOf(runtime: {
  config: { budgetWebhook?: string | undefined; budgetWebhookSecret?: string | undefined };
  log: Logger;
  beforeClose: (() => Promise<void>)[];
}): BudgetWebhook | undefined {
  const { budgetWebhook: url, budgetWebhookSecret: secret } = runtime.config;
  if (!url || !secret) return undefined;
  let made = webhooks.get(runtime);
  if (!made) {
    const webhook = new BudgetWebhook({ url, secret, log: runtime.log });
    runtime.beforeClose.push(() => webhook.flush());
    webhooks.set(runtime, webhook);
    made = webhook;
  }
  return made;
}
