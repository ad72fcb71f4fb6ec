// The ledger of billed calls as a person reads it (plain JSON Lines in GATEWAY_LEDGER_DIR), and
// video_status without a job_id as an agent reads it: what the tests of billed calls look at.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** Every whole record in the ledger's day files, oldest file first. */
export function ledgerLines(dir: string): LedgerLine[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .sort()
    .flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n'))
    .filter((line) => line.startsWith('{') && line.endsWith('}'))
    .map((line) => JSON.parse(line) as LedgerLine);
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
