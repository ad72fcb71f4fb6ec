// doctor's file lines (runDoctor, as the CLI runs it): only those that apply to the
// configuration. None when no enabled tool reads or saves files; none about client roots where
// they are never asked for (stateless HTTP) or would change nothing (input roots and an absolute
// output directory both set).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/config/config.js';
import { type DoctorReport, runDoctor } from '../../../src/doctor/doctor.js';
import { tempDir } from '../../harness/harness.js';
import { type ReferenceService, startReferenceService } from '../../reference-service/index.js';

const SECRET = 'sk-doctor-files-0123456789abcdef';
let service: ReferenceService;

beforeAll(async () => {
  service = await startReferenceService({ apiKey: SECRET });
});
afterAll(() => service.close());

async function doctor(env: Record<string, string>, cwd: string): Promise<DoctorReport> {
  const { config } = parseCommandLine(
    ['doctor'],
    {
      GATEWAY_BASE_URL: service.url,
      GATEWAY_API_KEY: SECRET,
      GATEWAY_LEDGER_DIR: tempDir('gtm-ledger-'),
      ...env,
    },
    cwd,
  );
  return runDoctor(config);
}

const FILE_LINES = ['output_dir', 'output_dir_default', 'workspace', 'input_root'];
const fileLines = (report: DoctorReport) => report.checks.filter((c) => FILE_LINES.includes(c.id));

describe('doctor shows only the file lines that apply', () => {
  it('shows none when no enabled tool reads or saves files, and an unusable output directory fails nothing', async () => {
    const cwd = tempDir('gtm-doctor-');
    writeFileSync(join(cwd, 'a-file'), 'x');
    const report = await doctor({ GATEWAY_TOOLS: 'search,fetch', GATEWAY_OUTPUT_DIR: 'a-file/out' }, cwd);
    expect(fileLines(report)).toEqual([]);
    expect(report.ok).toBe(true);

    // With a tool that saves files, the same directory is a failure.
    const speech = await doctor(
      { GATEWAY_TOOLS: 'search,fetch,audio', GATEWAY_OUTPUT_DIR: 'a-file/out' },
      cwd,
    );
    expect(speech.checks.find((c) => c.id === 'output_dir')).toMatchObject({ status: 'fail' });
    expect(speech.ok).toBe(false);
  });

  it('says nothing of client roots when the input roots and an absolute output directory are set', async () => {
    const cwd = tempDir('gtm-doctor-');
    const inputs = join(cwd, 'inputs');
    const outputs = join(cwd, 'outputs');
    mkdirSync(inputs);
    mkdirSync(outputs);
    const report = await doctor({ GATEWAY_INPUT_ROOTS: inputs, GATEWAY_OUTPUT_DIR: outputs }, cwd);
    expect(fileLines(report).map((c) => [c.id, c.status, c.message])).toEqual([
      ['output_dir', 'ok', `Output directory writable: ${outputs}`],
      ['input_root', 'ok', `Input root: ${inputs}`],
    ]);

    // A relative output directory goes under a client's first root: then they matter.
    const relative = await doctor({ GATEWAY_INPUT_ROOTS: inputs }, cwd);
    expect(relative.checks.find((c) => c.id === 'workspace')?.message).toBe(
      'Clients that share workspace roots (Claude Code, Cursor, VS Code, Gemini CLI): GATEWAY_INPUT_ROOTS stays the input roots, files go to <first root>/gateway-output',
    );
  });

  it('says a stateless HTTP server without a workspace reads no local files, and nothing of client roots', async () => {
    // `/` is never a workspace (Claude Desktop starts servers there); files go to the per-user
    // data directory, here a temporary one. Nothing is written to `/`.
    const data = tempDir('gtm-data-');
    const stateless = await doctor(
      { GATEWAY_TRANSPORT: 'http', GATEWAY_STATELESS: 'true', XDG_DATA_HOME: data },
      '/',
    );
    expect(fileLines(stateless).map((c) => [c.id, c.status, c.message])).toEqual([
      [
        'output_dir',
        'ok',
        `Output directory (per-user default: / is not a project directory) ${join(data, 'gateway-tools-mcp', 'gateway-output')} does not exist yet; it will be created on the first save (${data} is writable)`,
      ],
      [
        'input_root',
        'warn',
        'No input roots: / is not a project directory, so a stateless HTTP server, which cannot ask clients for their roots, reads no local files',
      ],
    ]);

    // Over stdio the client's roots are asked for, and that is what the lines say.
    const stdio = await doctor({ XDG_DATA_HOME: data }, '/');
    expect(fileLines(stdio).map((c) => c.id)).toEqual(['output_dir', 'workspace', 'input_root']);
    expect(stdio.checks.find((c) => c.id === 'input_root')?.message).toBe(
      "No input roots: / is not a project directory, so local files are read only from the client's roots, when it shares them",
    );
  });
});
