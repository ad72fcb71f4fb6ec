// The usage report as text, written from its data (usage-data.ts) so both say the same: markdown
// for a model (the `usage` tool) and aligned columns for a person (`gateway-tools-mcp usage`).

import {
  BILLED_KINDS,
  type BilledKind,
  MEASURE,
  type Measure,
  REPORT_PERIODS,
  type ReportPeriod,
} from '../../config/billed-kinds.js';
import { clock, duration, money } from '../../ledger/evaluate.js';
import type { PersonUsage } from '../../ledger/reports.js';
import { withoutControlChars } from '../../lib/text.js';
import type { LimitData, PeriodData, UsageData } from './usage-data.js';

const PERIOD_LABEL: Record<ReportPeriod, string> = {
  hour: 'last hour',
  day: 'last 24 h',
  session: 'this session',
};

const UNIT_LABEL: Record<Measure, string> = {
  seconds: 's',
  chars: 'chars',
  tokens: 'tokens',
  calls: 'calls',
};

/** The report for a model: compact markdown. */
export function usageMarkdown(data: UsageData, now: number): string {
  const table = callTable(data);
  const rows = table && [table.head, table.head.map(() => '---'), ...table.rows].map(markdownRow);
  const sections = [
    `Billed calls of every server process of this user (ledger ${data.ledger}):`,
    rows ? rows.join('\n') : noCalls(data),
    notes(data),
    yours(data),
    [limitsHeading(data), ...data.limits.map((l) => `- ${limitLine(l, now)}`)].join('\n'),
  ];
  if (data.latest.length > 0) {
    const calls = data.latest.map(
      (c) => `- ${ago(c.at, now)}: ${c.tool}, ${c.model}, ${c.outcome}${c.words ? ` — "${c.words}"` : ''}`,
    );
    sections.push(['Latest calls:', ...calls].join('\n'));
  }
  // Blank lines between the parts: a line right after a table would read as one of its rows.
  return sections.filter(Boolean).join('\n\n');
}

/** The report for a person at a terminal: aligned columns. `note` leads (no ledger yet, say). */
export function usageTable(data: UsageData, now: number, note?: string): string {
  const table = callTable(data);
  const indent = (rows: string[]) => rows.map((row) => `  ${row}`);
  const lines = [
    ...(note ? [note, ''] : []),
    `Billed calls of every server process of this user (ledger ${data.ledger})`,
    '',
    ...(table ? indent(aligned([table.head, ...table.rows])) : [noCalls(data)]),
  ];
  const said = notes(data);
  if (said) lines.push('', said);
  lines.push('', limitsHeading(data));
  lines.push(...indent(aligned(data.limits.map((l) => [l.limit, limitState(l, now)]))));
  if (data.latest.length > 0) {
    // Read from files: nothing in them may move the cursor or recolour the terminal.
    const rows = data.latest.map((c) =>
      [clock(c.at), c.tool, c.model, c.outcome, c.words].map(withoutControlChars),
    );
    lines.push('', 'Latest calls:', ...indent(aligned(rows)));
  }
  return `${lines.join('\n')}\n`;
}

interface Table {
  head: string[];
  rows: string[][];
}

/** Calls per kind and period, and the estimated cost; null when there is nothing to show. */
function callTable(data: UsageData): Table | null {
  const periods = REPORT_PERIODS.filter((p) => data.periods[p]);
  const shown = periods.map((p) => data.periods[p] as PeriodData);
  if (shown.every((p) => BILLED_KINDS.every((k) => p.calls[k] === 0))) return null;
  const rows = BILLED_KINDS.map((kind) => [kind, ...shown.map((p) => callCell(p, kind))]);
  if (shown.some((p) => p.cost !== null)) {
    rows.push(['cost (estimated)', ...shown.map((p) => (p.cost === null ? '—' : money(p.cost)))]);
  }
  return { head: ['kind', ...periods.map((p) => PERIOD_LABEL[p])], rows };
}

function callCell(period: PeriodData, kind: BilledKind): string {
  const count = String(period.calls[kind]);
  const amount = period.amounts[`${kind}_${MEASURE[kind]}`];
  if (amount === undefined) return count;
  return `${count} (${amount.toLocaleString('en-US', { maximumFractionDigits: 1 })} ${UNIT_LABEL[MEASURE[kind]]})`;
}

function noCalls(data: UsageData): string {
  return data.periods.session
    ? 'No billed calls in the last 24 hours, nor in this session.'
    : 'No billed calls in the last 24 hours.';
}

/** What the counts leave out or are unsure of, over the last 24 hours; and whether cost is known. */
function notes(data: UsageData): string {
  const day = data.periods.day as PeriodData;
  const said: string[] = [];
  if (day.unknown > 0)
    said.push(
      `${day.unknown} ${day.unknown === 1 ? 'call has' : 'calls have'} an unknown outcome: counted, as ${day.unknown === 1 ? 'it' : 'they'} may have been billed.`,
    );
  if (day.not_billed > 0)
    said.push(`${day.not_billed} refused or declined (nothing billed) in the last 24 hours.`);
  if (day.cost === null) said.push('No cost estimate: GATEWAY_PRICES is not set.');
  else if (day.unpriced > 0)
    said.push(
      `The cost leaves out ${day.unpriced} ${day.unpriced === 1 ? 'call' : 'calls'} no price in GATEWAY_PRICES applies to.`,
    );
  return said.join(' ');
}

/** The caller's own calls in each period, in one line: `Yours (ana): last hour 1 video; …`. */
function yours(data: UsageData): string {
  if (!data.you) return '';
  const spent = Object.entries(data.you.periods).map(([period, use]) => {
    const calls = BILLED_KINDS.filter((kind) => use.calls[kind] > 0).map(
      (kind) => `${use.calls[kind]} ${kind}`,
    );
    const cost = use.cost !== null && use.cost > 0 ? ` (about ${money(use.cost)})` : '';
    return `${PERIOD_LABEL[period as ReportPeriod]} ${calls.length > 0 ? calls.join(', ') : 'none'}${cost}`;
  });
  return `Yours (${withoutControlChars(data.you.person)}): ${spent.join('; ')}.`;
}

function limitsHeading(data: UsageData): string {
  if (data.limits.some((l) => l.scope === 'you'))
    return 'Limits (GATEWAY_LIMITS: everyone sharing the ledger; GATEWAY_LIMITS_PER_USER: yours):';
  return data.limits.length > 0
    ? 'Limits (GATEWAY_LIMITS):'
    : 'No limits: GATEWAY_LIMITS is not set, so billed calls are not bounded.';
}

function limitLine(limit: LimitData, now: number): string {
  return `${limit.scope === 'you' ? 'yours: ' : ''}${limit.limit}: ${limitState(limit, now)}`;
}

/** `usage --by-user`: each person's calls in the last 24 hours and this month, and their limits. */
export function byPersonTable(ledger: string, people: readonly PersonUsage[], now: number): string {
  const kinds = (calls: Record<BilledKind, number>) =>
    BILLED_KINDS.filter((kind) => calls[kind] > 0)
      .map((kind) => `${calls[kind]} ${kind}`)
      .join(', ') || 'none';
  const priced = people.some((p) => p.dayCost !== null);
  const limits = people[0]?.limits.map((l) => l.limit) ?? [];
  const head = [
    'person',
    'last 24 h',
    'this month',
    ...(priced ? ['cost 24 h', 'cost month'] : []),
    ...limits,
  ];
  const rows = people.map((p) => [
    withoutControlChars(p.person),
    kinds(p.day),
    kinds(p.month),
    ...(priced ? [money(p.dayCost ?? 0), money(p.monthCost ?? 0)] : []),
    ...p.limits.map((l) =>
      limitState({ limit: l.limit, scope: 'you', used: l.used, left: l.left, next_at: l.nextAt }, now),
    ),
  ]);
  const lines = [`Billed calls by person (ledger ${ledger})`, ''];
  if (rows.length === 0) lines.push('No billed calls this month, nor in the last 24 hours.');
  else lines.push(...aligned([head, ...rows]).map((row) => `  ${row}`));
  if (limits.length > 0) lines.push('', 'Limits per person: GATEWAY_LIMITS_PER_USER.');
  return `${lines.join('\n')}\n`;
}

/** A limit's state: how much is used and left, or when the next call is possible. */
export function limitState(limit: LimitData, now: number): string {
  const cost = limit.limit.startsWith('cost=');
  const amount = (n: number) => (cost ? money(n) : String(n));
  if (limit.used === null || limit.left === null) return 'counted in each server process';
  const used = `${amount(limit.used)} used`;
  if (limit.left > 0) return `${used}, ${amount(limit.left)} left`;
  const when =
    limit.next_at !== null
      ? `the next call is possible at ${clock(limit.next_at)} (in ${duration(Date.parse(limit.next_at) - now)})`
      : limit.limit.endsWith('/session')
        ? 'no more until the server restarts'
        : 'it allows no call';
  return `${used}, none left: ${when}`;
}

/** How long ago, in a model's terms: `40 s ago`, `12 min ago`, `3 h 5 min ago`. */
function ago(iso: string, now: number): string {
  return `${duration(now - Date.parse(iso))} ago`;
}

function markdownRow(cells: string[]): string {
  return `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
}

/** Rows as columns padded to their widest cell; the last column is not padded. */
function aligned(rows: string[][], gap = '  '): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join(gap)
      .trimEnd(),
  );
}
