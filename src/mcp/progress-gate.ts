import type { ServerNotification } from '@modelcontextprotocol/server';
import type { Logger } from '../lib/log.js';
import type { Progress } from '../tools/define.js';

/**
 * How long a result waits after the call's last progress notification was sent. The SDK's
 * client handles a notification one step later than a response that arrives in the same read;
 * a notification sent just before the result then finds its call already over and is dropped
 * ("unknown token"). A pause this long puts the two in separate reads.
 */
export const PROGRESS_SETTLE_MS = 40;

/** What the gate needs of a request: its progress token, its cancellation, and a way to notify. */
export interface ProgressChannel {
  progressToken: string | number | undefined;
  signal: { readonly aborted: boolean };
  notify(notification: ServerNotification): Promise<void>;
}

/**
 * A call's progress notifications, as MCP and clients need them: in order, each one's progress
 * above the last and its share of the total (when given) never below the last; and `settle()`,
 * awaited before the result is sent, so the last notification arrives before it.
 */
export function progressGate(context: ProgressChannel, log: Pick<Logger, 'debug'>) {
  const token = context.progressToken;
  let lastProgress = Number.NEGATIVE_INFINITY;
  let lastShare = 0;
  let sending: Promise<void> = Promise.resolve();
  let sentAt: number | undefined;
  return {
    progress(update: Progress): Promise<void> {
      if (token === undefined || context.signal.aborted) return sending;
      const share = update.total ? update.progress / update.total : undefined;
      if (update.progress <= lastProgress || (share !== undefined && share < lastShare)) {
        log.debug(`progress ${update.progress}/${update.total ?? '?'} not sent: it would go backwards`);
        return sending;
      }
      lastProgress = update.progress;
      if (share !== undefined) lastShare = share;
      const params = { progressToken: token, ...update };
      sending = sending.then(() =>
        context.notify({ method: 'notifications/progress', params }).then(
          () => {
            sentAt = performance.now();
          },
          (error: unknown) => log.debug(`progress notification not sent: ${String(error)}`),
        ),
      );
      return sending;
    },
    async settle(): Promise<void> {
      await sending;
      if (sentAt === undefined || context.signal.aborted) return;
      const wait = PROGRESS_SETTLE_MS - (performance.now() - sentAt);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    },
  };
}
