// Doctor's lines about billed calls: the ledger (its folder, whether this user alone can write it
// and it reads; or the PostgreSQL database and whether it answers), since a billed call the
// ledger cannot record is not sent; the limits in force with what they leave, and the prices.
// Read only: the folder is not made, nothing is recorded, nothing is spent.

import type { Config } from '../config/config.js';
import { money } from '../ledger/evaluate.js';
import { LedgerUnavailable, type UsageReport } from '../ledger/ledger.js';
import { checkLedgerPlace, fullDisk, type LedgerPlace, LedgerPlaceProblem } from '../ledger/sqlite-place.js';
import type { Logger } from '../lib/log.js';
import { withoutCredentials } from '../lib/urls.js';
import type { Runtime } from '../runtime.js';
import { foldersApart } from '../shared-state/output-markers.js';
import { ledgerReader } from '../tools/usage/read-usage.js';
import { type LimitData, usageData } from '../tools/usage/usage-data.js';
import { limitState } from '../tools/usage/usage-text.js';
import { type Check, fail, ok, warn } from './check.js';
import { checkOutputDir } from './file-checks.js';

const RAISE = 'Wait until the time it says, or raise the limit in GATEWAY_LIMITS and restart the server.';

export async function checkLedger(config: Config, log: Logger): Promise<Check[]> {
  const read = await readReport(config, log);
  const checks = [config.ledgerUrl ? databaseCheck(config.ledgerUrl, read) : await folderCheck(config, read)];
  checks.push(limitsCheck(config, read));
  if (config.prices.length > 0) {
    const cost = 'report' in read ? read.report.periods.day.cost : null;
    const spent = cost === null ? '' : `; estimated cost in the last 24 hours: ${money(cost)}`;
    checks.push(
      ok('prices', false, `Prices (GATEWAY_PRICES): ${config.prices.map((p) => p.text).join(', ')}${spent}`),
    );
  }
  return checks;
}

const NOT_SENT = 'a billed call the ledger cannot record is not sent';

/** The SQLite ledger: a folder this user alone can write, on a local disk, and a database that reads. */
async function folderCheck(config: Config, read: Read): Promise<Check> {
  const folder = await checkOutputDir(config.ledgerDir, 'Ledger of billed calls', 'ledger', true, {
    fix: `Set GATEWAY_LEDGER_DIR to a directory this user can write, or fix its permissions: ${NOT_SENT}.`,
    madeOn: 'the first billed call',
  });
  if (folder.status === 'fail') return folder;
  let warning: LedgerPlace['warning'];
  try {
    ({ warning } = await checkLedgerPlace(config.ledgerDir, false));
    // A full disk still reads, but refuses every begin: said as the refusal says it.
    const full = fullDisk(config.ledgerDir);
    if (full) throw full;
  } catch (error) {
    if (!(error instanceof LedgerPlaceProblem)) throw error;
    return fail('ledger', true, error.problem, `${capitalized(error.fix)}: ${NOT_SENT}.`);
  }
  if ('why' in read)
    return fail('ledger', true, `Ledger of billed calls: ${read.why}`, `Fix it: ${NOT_SENT}.`);
  if (warning)
    return warn('ledger', true, `${folder.message}; ${warning.problem}`, `${capitalized(warning.fix)}.`);
  return folder;
}

/** The PostgreSQL ledger: reachable, and readable with the URL's credentials. */
function databaseCheck(url: string, read: Read): Check {
  if ('why' in read)
    return fail(
      'ledger',
      true,
      `Ledger of billed calls: ${read.why}`,
      `Fix GATEWAY_LEDGER_URL: ${NOT_SENT}.`,
    );
  return ok(
    'ledger',
    true,
    `Ledger of billed calls: PostgreSQL at ${withoutCredentials(url)}, shared by every server process on every host that names it`,
  );
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

type Read = { report: UsageReport } | { why: string };

async function readReport(config: Config, log: Logger): Promise<Read> {
  const reader = ledgerReader(config, log);
  try {
    return { report: await reader.usage(0) };
  } catch (error) {
    if (error instanceof LedgerUnavailable) return { why: error.message };
    throw error;
  } finally {
    await reader.close();
  }
}

function limitsCheck(config: Config, read: Read): Check {
  const perUser = config.limitsPerUser.length
    ? `; each person's (GATEWAY_LIMITS_PER_USER, see usage --by-user): ${config.limitsPerUser.map((l) => l.text).join(', ')}`
    : '';
  if (config.limits.length === 0 && perUser)
    return ok('limits', false, `Limits: none for everyone together${perUser}`);
  if (config.limits.length === 0)
    return ok('limits', false, 'Limits: none (GATEWAY_LIMITS is not set), so billed calls are not bounded');
  if (!('report' in read)) {
    const listed = config.limits.map((l) => l.text).join(', ');
    return warn(
      'limits',
      false,
      `Limits (GATEWAY_LIMITS): ${listed}; how much of them is used is unknown. ${read.why}`,
      `Fix ${config.ledgerUrl ? 'GATEWAY_LEDGER_URL' : 'GATEWAY_LEDGER_DIR'} (see the ledger line).`,
    );
  }
  const now = Date.parse(read.report.at);
  const limits = usageData(read.report, false).limits;
  const shown = limits.map((l) => `${l.limit} (${limitState(l, now)})`).join('; ');
  const message = `Limits (GATEWAY_LIMITS), across this user's server processes: ${shown}${perUser}`;
  if (config.limits.some((l) => l.subject === 'cost') && config.prices.length === 0) {
    return warn(
      'limits',
      false,
      `${message}; a cost limit never stops a call while GATEWAY_PRICES is empty`,
      'Set GATEWAY_PRICES (e.g. xai/grok-imagine-video=0.05/second) so calls have an estimated cost.',
    );
  }
  const full = limits.filter((l: LimitData) => l.left === 0);
  if (full.length > 0) return warn('limits', false, message, RAISE);
  return ok('limits', false, message);
}

/**
 * With a shared ledger: whether the replicas that share it also share this output folder, as a
 * file one saved is read by another only then (each HTTP server marks its folder).
 */
export async function checkSharedOutput(runtime: Runtime): Promise<Check> {
  const { outputDir } = runtime.config;
  try {
    const apart = await foldersApart(() => runtime.ledger().database(), outputDir);
    if (apart.length === 0)
      return ok(
        'shared_output',
        false,
        `Saved files: every replica seen lately saves to ${outputDir}, so each reads the others' files`,
      );
    const where = apart.map((r) => `${r.host}:${r.folder}`).join(', ');
    return warn(
      'shared_output',
      false,
      `Saved files: replicas sharing this ledger save where this one cannot see (${where}): a file one of them saved is not found here`,
      'Give every replica the same GATEWAY_OUTPUT_DIR, on a volume they all mount.',
    );
  } catch (error) {
    return warn(
      'shared_output',
      false,
      `Saved files: whether the replicas share the output folder is unknown (${(error as Error).message})`,
      'Check GATEWAY_LEDGER_URL.',
    );
  }
}
