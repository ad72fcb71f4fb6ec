// `usage`: what billed calls have been made and what the limits leave, from the ledger every
// server process sharing it writes: everyone's, and the caller's own beside it. Free: it reads the
// ledger and sends nothing.

import { z } from 'zod';
import { LedgerUnavailable } from '../../ledger/ledger.js';
import { UserError } from '../../lib/user-error.js';
import { ANNOTATIONS, defineTool } from '../define.js';
import { success } from '../results.js';
import { serverUsage } from './read-usage.js';
import { usageData } from './usage-data.js';
import { usageMarkdown } from './usage-text.js';

/**
 * Kept lean for the catalog budget: the field names say what they hold (usage-data.ts has their
 * meaning), and the text says the same facts in words.
 */
const fields = z.record(z.string(), z.union([z.string(), z.number(), z.null()]));
const counts = z.record(z.string(), z.number());

/** hour, day, session: calls and amounts per kind, estimated cost, unknown and not billed. */
const periods = z.record(
  z.string(),
  z.object({
    calls: counts,
    amounts: counts,
    cost: z.number().nullable(),
    unpriced: z.number(),
    unknown: z.number(),
    not_billed: z.number(),
  }),
);

const outputSchema = {
  ledger: z.string(),
  periods,
  you: z.object({ person: z.string(), periods }).optional(),
  /** limit, scope (everyone, you), used, left, next_at */
  limits: z.array(fields),
  /** at, tool, model, outcome, words */
  latest: z.array(fields),
};

export const usage = defineTool({
  name: 'usage',
  group: 'usage',
  title: 'Usage',
  description: 'What billed calls cost so far and what the limits leave. Free.',
  inputSchema: {},
  outputSchema,
  annotations: ANNOTATIONS.local,
  async run(_args, ctx) {
    let report: Awaited<ReturnType<typeof serverUsage>>;
    try {
      report = await serverUsage(ctx.runtime, ctx.principal.id);
    } catch (error) {
      if (error instanceof LedgerUnavailable) throw new UserError(error.message);
      throw error;
    }
    const data = usageData(report, true);
    return success(usageMarkdown(data, Date.parse(report.at)), { ...data });
  },
});
