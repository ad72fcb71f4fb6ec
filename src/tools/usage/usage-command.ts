// `gateway-tools-mcp usage`: the usage report for a person, read from GATEWAY_LEDGER_DIR without
// making it — a table for the terminal, or with --json the data. This process is no server, so
// the report has no session: session limits are counted in each server process.

import type { Config } from '../../config/config.js';
import type { Logger } from '../../lib/log.js';
import { ledgerExists, ledgerReader } from './read-usage.js';
import { LATEST_CALLS, usageData } from './usage-data.js';
import { usageTable } from './usage-text.js';

/** What to print on stdout. Throws LedgerUnavailable when the ledger cannot be read. */
export async function usageCommand(config: Config, json: boolean, log: Logger): Promise<string> {
  const exists = ledgerExists(config);
  const reader = ledgerReader(config, log);
  let report: Awaited<ReturnType<typeof reader.usage>>;
  try {
    report = await reader.usage(LATEST_CALLS);
  } finally {
    await reader.close();
  }
  const data = usageData(report, false);
  if (json) return `${JSON.stringify({ ...data, ledger_exists: exists }, null, 2)}\n`;
  const note = exists
    ? undefined
    : `There is no ledger yet in ${config.ledgerDir}: no billed call has been recorded there.`;
  return usageTable(data, Date.parse(report.at), note);
}
