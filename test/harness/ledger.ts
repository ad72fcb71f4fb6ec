// The ledger of billed calls as a person reads it (the SQLite file in GATEWAY_LEDGER_DIR), and
// video_status without a job_id as an agent reads it: what the tests of billed calls look at.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { structuredOf, textOf } from './harness.js';

export interface LedgerLine {
  type: 'begin' | 'end' | 'status';
  id?: string;
  kind?: string;
  tool?: string;
  model?: string;
  words?: string;
  key?: string;
  expected?: number;
  outcome?: string;
  job?: string;
  amount?: number;
  reason?: string;
  status?: string;
  file?: string;
}

/**
 * Every record in the ledger's database (ledger.sqlite), read only: each call's begin, its end
 * once recorded, and the jobs' last statuses, in the order begun.
 */
export function ledgerLines(dir: string): LedgerLine[] {
  const file = join(dir, 'ledger.sqlite');
  if (!existsSync(file)) return [];
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    const lines: LedgerLine[] = [];
    const rows = (sql: string) => db.prepare(sql).all() as Record<string, unknown>[];
    for (const row of rows('SELECT * FROM gateway_ledger_calls ORDER BY seq')) {
      lines.push(
        withoutNulls({
          type: 'begin',
          id: row.id,
          kind: row.kind,
          tool: row.tool,
          model: row.model,
          words: row.words,
          key: row.key,
          expected: row.expected,
        }),
      );
      if (row.outcome !== null)
        lines.push(
          withoutNulls({
            type: 'end',
            id: row.id,
            outcome: row.outcome,
            job: row.job,
            amount: row.amount,
            reason: row.reason,
            status: row.status,
            file: row.file,
          }),
        );
    }
    for (const row of rows('SELECT * FROM gateway_ledger_job_status ORDER BY at'))
      lines.push(withoutNulls({ type: 'status', job: row.job, status: row.status }));
    return lines;
  } finally {
    db.close();
  }
}

function withoutNulls(record: Record<string, unknown>): LedgerLine {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== null)) as unknown as LedgerLine;
}

/** Each begun call with its end (if any), in the order begun. */
export function ledgerCalls(dir: string): { begin: LedgerLine; end: LedgerLine | undefined }[] {
  const lines = ledgerLines(dir);
  return lines
    .filter((l) => l.type === 'begin')
    .map((begin) => ({ begin, end: lines.find((l) => l.type === 'end' && l.id === begin.id) }));
}

/** A job as video_status without a job_id lists it. */
export interface ListedJob {
  job_id: string | null;
  status: string;
  progress?: number | null;
  prompt: string;
  model: string;
  tool: string;
  submitted_at: string;
  idempotency_key?: string;
  next?: string;
}

/** video_status without a job_id: the result, its jobs and its text. */
export async function listJobs(
  client: Client,
): Promise<{ result: CallToolResult; jobs: ListedJob[]; text: string }> {
  const result = (await client.callTool({ name: 'video_status', arguments: {} })) as CallToolResult;
  const jobs = structuredOf<{ jobs?: ListedJob[] }>(result)?.jobs ?? [];
  return { result, jobs, text: textOf(result) };
}
