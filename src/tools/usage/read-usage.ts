// Reading the ledger for a usage report. Reading never makes the ledger's folder: a server that
// has billed nothing, `gateway-tools-mcp usage` and doctor leave no trace.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config/config.js';
import { Ledger, type LedgerReader, ledgerOptions, type UsageReport } from '../../ledger/ledger.js';
import { DATABASE_FILE } from '../../ledger/sqlite-place.js';
import type { Logger } from '../../lib/log.js';
import type { Runtime } from '../../runtime.js';
import { LATEST_CALLS } from './usage-data.js';

/** The ledger of GATEWAY_LEDGER_DIR opened to report on it: nothing is made or written. */
export function ledgerReader(config: Config, log: Logger): LedgerReader {
  return Ledger.read(ledgerOptions(config, log));
}

/** Whether the ledger may hold calls: a database URL is given, or the SQLite file exists. */
export function ledgerExists(config: Config): boolean {
  return config.ledgerUrl !== undefined || existsSync(join(config.ledgerDir, DATABASE_FILE));
}

/**
 * This server's report for `person`: its own ledger (which knows this process's calls as they
 * happen), or, while no folder exists, a reading of none. Throws LedgerUnavailable when it cannot
 * be read.
 */
export async function serverUsage(runtime: Runtime, person: string): Promise<UsageReport> {
  if (ledgerExists(runtime.config)) return runtime.ledger().usage(LATEST_CALLS, person);
  const reader = ledgerReader(runtime.config, runtime.log);
  try {
    return await reader.usage(LATEST_CALLS, person);
  } finally {
    await reader.close();
  }
}
