// `gateway-tools-mcp ledger export [--since TIME] [--user ID] [--format jsonl|csv]`: every billed
// call in the ledger (or one person's) as JSON Lines or CSV on stdout, oldest first, for `jq` and
// spreadsheets. Read only, like `usage`: nothing is made or written, and a ledger not made yet
// exports nothing.

import type { Config } from '../../config/config.js';
import { ConfigError } from '../../config/config.js';
import type { LedgerCall } from '../../ledger/ledger.js';
import type { Logger } from '../../lib/log.js';
import { ledgerReader } from './read-usage.js';

/** One call as an exported line. */
interface ExportedCall {
  id: string;
  at: string;
  /** Who called (an OAuth token's subject, or `local:<user>`), and through which client. */
  person: string;
  client: string | null;
  kind: string;
  tool: string;
  model: string;
  words: string;
  /** accepted, refused, declined, unknown, or pending (being sent). */
  outcome: string;
  job_id: string | null;
  idempotency_key: string | null;
  amount: number | null;
  unit: string;
  /** Estimated from GATEWAY_PRICES; null without a price. */
  cost: number | null;
  file: string | null;
  reason: string | null;
  ended_at: string | null;
  pid: number;
}

export interface ExportOptions {
  since?: string | undefined;
  user?: string | undefined;
  format?: 'jsonl' | 'csv' | undefined;
}

/** Writes the lines with `write`, which may wait (a full pipe). Throws LedgerUnavailable, or ConfigError for --since. */
export async function exportCommand(
  config: Config,
  { since, user, format = 'jsonl' }: ExportOptions,
  log: Logger,
  write: (text: string) => Promise<void>,
  now: number = Date.now(),
): Promise<void> {
  const from = since === undefined ? 0 : sinceTime(since, now);
  const reader = ledgerReader(config, log);
  const line =
    format === 'csv'
      ? (call: ExportedCall) => `${COLUMNS.map((column) => csvCell(call[column])).join(',')}\r\n`
      : (call: ExportedCall) => `${JSON.stringify(call)}\n`;
  try {
    if (format === 'csv') await write(`${COLUMNS.join(',')}\r\n`);
    await reader.exportCalls(from, (calls) => write(calls.map((c) => line(exported(c))).join('')), user);
  } finally {
    await reader.close();
  }
}

/** The CSV header: the JSON Lines keys, in their order. */
const COLUMNS: readonly (keyof ExportedCall)[] = [
  'id',
  'at',
  'person',
  'client',
  'kind',
  'tool',
  'model',
  'words',
  'outcome',
  'job_id',
  'idempotency_key',
  'amount',
  'unit',
  'cost',
  'file',
  'reason',
  'ended_at',
  'pid',
];

/**
 * A CSV cell (RFC 4180): quoted when it holds a comma, quote or line break; null is empty. Text
 * that a spreadsheet would run as a formula (a prompt's words beginning with =, +, -, @) is
 * prefixed with ' so that it is shown, not run.
 */
function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function exported(call: LedgerCall): ExportedCall {
  return {
    id: call.id,
    at: call.at,
    person: call.person,
    client: call.client,
    kind: call.kind,
    tool: call.tool,
    model: call.model,
    words: call.words,
    outcome: call.state,
    job_id: call.jobId,
    idempotency_key: call.idempotencyKey,
    amount: call.amount,
    unit: call.unit,
    cost: call.cost,
    file: call.file,
    reason: call.reason,
    ended_at: call.endedAt,
    pid: call.pid,
  };
}

const SPAN = /^(\d+)\s*(m|min|h|d|w)$/i;
const SPAN_MS: Record<string, number> = {
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** `--since`: a date or time (2026-11-01, 2026-11-01T09:00Z), or a span back from now (90m, 12h, 7d, 2w). */
function sinceTime(text: string, now: number): number {
  const span = SPAN.exec(text.trim());
  if (span) return now - Number(span[1]) * (SPAN_MS[(span[2] as string).toLowerCase()] as number);
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at))
    throw new ConfigError(
      `invalid --since "${text.slice(0, 40)}": give a date or time (2026-11-01, 2026-11-01T09:00Z) or a span (90m, 12h, 7d, 2w)`,
    );
  return at;
}
