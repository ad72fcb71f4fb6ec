// The fault matrix: every tool against every fault the reference service can inject on the route
// it calls. Writes docs/reliability.md as a by-product; the assertions are the per-row checks.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DOWNLOAD_FAULTS,
  FAULTS,
  LOOKUP_FAULTS,
  SECRET,
  TIMEOUT_MS,
} from '../harness/fault-matrix/faults.js';
import { type Matrix, renderReport } from '../harness/fault-matrix/report.js';
import { type Row, runRow, type Transport } from '../harness/fault-matrix/run.js';
import { DISCOVERY_CASES, DOWNLOAD_CASES } from '../harness/fault-matrix/secondary-routes.js';
import { TOOL_CASES, type ToolCase } from '../harness/fault-matrix/tools.js';
import { type Connected, connectInMemory, PROJECT_ROOT, textOf } from '../harness/harness.js';
import { scaled } from '../harness/time.js';
import { type ReferenceService, startReferenceService } from '../reference-service/index.js';

const STDIO_TOOLS = new Set(['web_fetch', 'video_generate', 'ask_model']);
const STDIO_CASES = TOOL_CASES.filter((tc) => STDIO_TOOLS.has(tc.label));
/** The same cases, as another list: each matrix is found by its cases. */
const STDIO_2026_CASES = [...STDIO_CASES];
const STDIO_FAULTS = FAULTS.filter((f) => ['401', '503', 'reset', 'hang'].includes(f.id));

const matrices: Matrix[] = [];

beforeAll(async () => {
  const run = (cases: readonly ToolCase[], faults: typeof FAULTS, transport?: Transport) =>
    Promise.all(cases.map((tc) => runRow(tc, faults, transport)));
  const [main, lookups, downloads, stdio, modern] = await Promise.all([
    run(TOOL_CASES, FAULTS),
    run(DISCOVERY_CASES, LOOKUP_FAULTS),
    run(DOWNLOAD_CASES, DOWNLOAD_FAULTS),
    run(STDIO_CASES, STDIO_FAULTS, 'stdio'),
    run(STDIO_CASES, STDIO_FAULTS, 'stdio-2026'),
  ]);
  matrices.push(
    {
      title: 'Main routes',
      intro: 'Each tool, faults on the service route that does its work.',
      cases: TOOL_CASES,
      faults: FAULTS,
      rows: main,
    },
    {
      title: 'Lookups before the main call',
      intro:
        'Nothing configured, so the tool must first look up a default (a model list) or the job it starts from; ' +
        'the fault is on that lookup, and the billable route after it must not be called at all.',
      cases: DISCOVERY_CASES,
      faults: LOOKUP_FAULTS,
      rows: lookups,
    },
    {
      title: 'Downloads after the main call',
      intro:
        'The tool did its main call and now downloads a file (a finished video, an audio URL); the fault is on the ' +
        'file route. For the audio URL the transcription must not be sent.',
      cases: DOWNLOAD_CASES,
      faults: DOWNLOAD_FAULTS,
      rows: downloads,
    },
    {
      title: 'The built server over stdio',
      intro:
        'A subset against `dist/cli.js` spawned over stdio, its stderr log (level debug) checked for the key too.',
      cases: STDIO_CASES,
      faults: STDIO_FAULTS,
      rows: stdio,
    },
    {
      title: 'The built server over stdio, to a 2026-07-28 client',
      intro:
        'The same subset, for a client of the 2026-07-28 era of MCP (server/discover, a `_meta` envelope on each request).',
      cases: STDIO_2026_CASES,
      faults: STDIO_FAULTS,
      rows: modern,
    },
  );
  writeFileSync(join(PROJECT_ROOT, 'docs/reliability.md'), renderReport(matrices));
}, scaled(240_000));

/** Every failed cell of a row, with its problems and the message the agent saw. */
function failures(row: Row | undefined): string[] {
  if (!row) return ['row did not run'];
  return row.cells
    .filter((c) => c.verdict === 'fail')
    .map((c) => `${c.fault}: ${c.problems.join('; ')} — "${c.message.slice(0, 300)}"`);
}

describe('every fault ends in an actionable error, and the server stays up', () => {
  for (const [title, cases] of [
    ['main route', TOOL_CASES],
    ['lookup', DISCOVERY_CASES],
    ['download', DOWNLOAD_CASES],
    ['stdio', STDIO_CASES],
    ['stdio, 2026-07-28', STDIO_2026_CASES],
  ] as const) {
    for (const tc of cases) {
      it(`${title}: ${tc.label}`, () => {
        const matrix = matrices.find((m) => m.cases === cases);
        const row = matrix?.rows.find((r) => r.label === tc.label);
        expect(row?.cells.length).toBe(matrix?.faults.length);
        expect(failures(row)).toEqual([]);
      });
    }
  }
});

describe('a slow body that finishes within the timeout is a success', () => {
  let service: ReferenceService;
  let conn: Connected;
  beforeAll(async () => {
    service = await startReferenceService({ apiKey: SECRET });
    conn = await connectInMemory({
      GATEWAY_BASE_URL: service.url,
      GATEWAY_API_KEY: SECRET,
      GATEWAY_TIMEOUT_MS: String(TIMEOUT_MS),
      GATEWAY_SEARCH_MODEL: 'tavily',
      GATEWAY_SPEECH_MODEL: 'openai/tts-1/alloy',
      GATEWAY_CHAT_MODEL: 'openai/gpt-4o-mini',
    });
  });
  afterAll(async () => {
    await conn.close();
    await service.close();
  });

  const cases = [
    ['web_search', 'search', { query: 'slow but fine' }],
    ['audio_speech', 'speech', { text: 'Slow but fine.' }],
    ['ask_model', 'responses', { prompt: 'Slow but fine.' }],
  ] as const;
  for (const [tool, route, args] of cases) {
    it(`${tool}: a pause of a third of the timeout mid-body`, async () => {
      service.inject(route, { slowBodyMs: Math.round(TIMEOUT_MS / 3) });
      const result = await conn.client.callTool({ name: tool, arguments: args });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(service.counters[route]).toBe(1);
    });
  }
});
