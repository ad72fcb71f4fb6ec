// `gateway-tools-mcp usage`: the usage report for a person, read from GATEWAY_LEDGER_DIR without
// making it — a table for the terminal, or with --json the data. This process is no server, so
// the report has no session: session limits are counted in each server process.

import type { Config } from '../../config/config.js';
import type { Logger } from '../../lib/log.js';
import { ledgerExists, ledgerReader } from './read-usage.js';
import { LATEST_CALLS, usageData } from './usage-data.js';
import { byPersonTable, usageTable } from './usage-text.js';

/**
 * What to print on stdout: the report, or with `byUser` each person's use and per-person limits.
 * Throws LedgerUnavailable when the ledger cannot be read.
 */
export async function usageCommand(
  config: Config,
  json: boolean,
  log: Logger,
  byUser = false,
): Promise<string> {
  const exists = ledgerExists(config);
  const reader = ledgerReader(config, log);
  if (byUser) {
    try {
      const people = await reader.usageByPerson();
      if (json) return `${JSON.stringify({ ledger: reader.where, people }, null, 2)}\n`;
      return byPersonTable(reader.where, people, Date.now());
    } finally {
      await reader.close();
    }
  }
  let report: Awaited<ReturnType<typeof reader.usage>>;
  try {
    report = await reader.usage(LATEST_CALLS);
  } finally {
    await reader.close();
  }
  const data = usageData(report, false);
  if (json) return `${JSON.stringify({ ...data, ledger_exists: exists }, null, 2)}\n`;
  const note = exists
    ? config.limitsPerUser.length > 0
      ? 'Limits per person (GATEWAY_LIMITS_PER_USER) are shown by gateway-tools-mcp usage --by-user.'
      : undefined
    : `There is no ledger yet in ${config.ledgerDir}: no billed call has been recorded there.`;
  return usageTable(data, Date.parse(report.at), note);
}
