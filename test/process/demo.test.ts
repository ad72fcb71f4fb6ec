// `npm run demo` as a new user reads it: the built server against the reference service, each
// answer one a model could have given. The page question is answered from the page, without the
// server's instructions to the answering model showing (which read like a leaked prompt).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_GUIDE_URL, REPOSITORY_URL } from '../../src/links.js';
import { PROJECT_ROOT } from '../harness/harness.js';
import { scaled } from '../harness/time.js';
import { headingAnchors } from './doc-links.js';

const run = promisify(execFile);
let output = '';

/** The body of the demo section whose heading starts with `=== <start>`. */
function section(start: string): string {
  const at = output.indexOf(`=== ${start}`);
  expect(at, `no section ${start}`).toBeGreaterThanOrEqual(0);
  const body = output.slice(output.indexOf('\n', at) + 1);
  return body.slice(0, body.search(/\n=== |\n\n[a-z]/) + 1 || undefined);
}

beforeAll(async () => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'scripts/demo.ts')], {
    cwd: PROJECT_ROOT,
    timeout: scaled(90_000),
  });
  output = stdout;
}, scaled(120_000));

describe('npm run demo', () => {
  it('says the service is a stand-in whose results are made up', () => {
    expect(output.split('\n')[0]).toMatch(
      /^reference service on http:\/\/127\.0\.0\.1:\d+ \(a local stand-in for the gateway/,
    );
  });

  it('answers the page question from the page, without the instructions to the answering model', () => {
    const answer = section('web_fetch {"url":"https://example.com/docs","prompt"');
    expect(answer).toContain("openai/gpt-4o-mini's answer from the whole page");
    expect(answer).toContain('This is the content of https://example.com/docs.');
    expect(answer).not.toMatch(/Answer the question|untrusted|Question:|Title:|Echo:/);
  });

  it('answers ask_model as a model would, not with an echo of the prompt', () => {
    const answer = section('ask_model');
    expect(answer).not.toMatch(/Echo:|Say hello in five words/);
    expect(answer).toMatch(/^Hello/);
  });

  it('ends with the next step: the gateway guide and the README section on the web, and doctor as npx runs it', () => {
    const end = output.slice(output.lastIndexOf('\nNext: ') + 1);
    expect(end).toMatch(/^Next: a real gateway\. The gateway guide starts 9router/);
    expect(end).toContain(GATEWAY_GUIDE_URL);
    expect(end).toContain(`${REPOSITORY_URL}#add-it-to-your-client`);
    expect(end).toContain('`npx -y gateway-tools-mcp doctor`');
    // Every heading it points to is one the README has (test/process/doc-links.test.ts checks the rule).
    expect(headingAnchors(readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8'))).toContain(
      'add-it-to-your-client',
    );
  });

  it('shows a page heading once, not again on the page that continues it', () => {
    expect(output.match(/^# Page \/long/gm) ?? []).toHaveLength(1);
  });

  it('searches with a plain query', () => {
    expect(section('web_search')).toMatch(/^1\. Result 1 for model context protocol — https:\/\//m);
  });
});
