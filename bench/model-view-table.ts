import { MODEL_VIEW_CLIENTS } from '../test/harness/model-view.js';
import type { ModelViewRow } from './model-view.js';

/** The model-view rows as a markdown table: tokens per client, × the floor; a total row last. */
export function modelViewTable(rows: ModelViewRow[]): string {
  const total: ModelViewRow = {
    call: '**all of the above**',
    floor: sum(rows.map((r) => r.floor)),
    tokens: MODEL_VIEW_CLIENTS.map((_, i) => sum(rows.map((r) => r.tokens[i] ?? 0))),
    structuredJson: sum(rows.map((r) => r.structuredJson)),
  };
  const cell = (tokens: number, floor: number) => `${tokens} (${(tokens / floor).toFixed(2)}×)`;
  const head = ['result', 'floor', ...MODEL_VIEW_CLIENTS.map((c) => c.name), 'structured JSON (before)'];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const r of [...rows, total]) {
    const cells = [
      r.call,
      String(r.floor),
      ...r.tokens.map((t) => cell(t, r.floor)),
      cell(r.structuredJson, r.floor),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
