// `gateway-tools-mcp doctor`: checks what the tools need — the service answers, the key is
// accepted, which models serve each capability (the same defaults the tools pick), the output
// directory and the ledger of billed calls are writable, the limits in force — and says how to
// fix each problem. Never prints the key, nor credentials in the base URL (masked everywhere the
// one way lib/urls.ts does it).

import type { Config } from '../config/config.js';
import { replayableConfirmations } from '../config/startup-warnings.js';
import { withoutCredentials } from '../lib/urls.js';
import { closeRuntime, createRuntime } from '../runtime.js';
import type { ModelRole } from '../tools/models/default-models.js';
import { VERSION } from '../version.js';
import { type Check, type CheckStatus, type DoctorReport, ok, skipped, warn } from './check.js';
import { checkInputRoots, checkWorkspace, usesFiles } from './file-checks.js';
import { checkLedger, checkSharedOutput } from './ledger-checks.js';
import { checkLive } from './live-checks.js';
import { checkKey, checkRole, checkService } from './service-checks.js';

export type { Check, CheckStatus, DoctorReport } from './check.js';
export { LIVE_NOTICE } from './live-checks.js';

/** Doctor should answer promptly even when the configured timeout is long. */
const DOCTOR_TIMEOUT_MS = 15_000;

const ROLES: readonly { role: ModelRole; label: string; required: boolean }[] = [
  { role: 'search', label: 'Web search (web_search)', required: true },
  { role: 'fetch', label: 'Web fetch (web_fetch)', required: true },
  { role: 'chat', label: 'Chat (ask_model)', required: false },
  { role: 'summary', label: 'Page questions (web_fetch prompt)', required: false },
  { role: 'speech', label: 'Speech (audio_speech)', required: false },
  { role: 'transcription', label: 'Transcription (audio_transcribe)', required: false },
  { role: 'video', label: 'Video (video_generate)', required: false },
];

export interface DoctorOptions {
  /** Also one real (billed) search and fetch through the tools' providers (live-checks.ts). */
  live?: boolean;
}

export async function runDoctor(config: Config, options: DoctorOptions = {}): Promise<DoctorReport> {
  const runtime = createRuntime({ ...config, timeoutMs: Math.min(config.timeoutMs, DOCTOR_TIMEOUT_MS) });
  const checks: Check[] = [];
  try {
    const service = await checkService(runtime, checks);
    const keyOk = service.accepted && (await checkKey(runtime, checks));
    if (!service.accepted) checks.push(skipped('api_key', 'API key', true, service.why));
    const why = service.accepted ? 'needs an accepted API key' : service.why;
    // Every model line needs an accepted key, the video default too: a tool that cannot call the
    // gateway has no model worth a ✓.
    for (const { role, label, required } of ROLES) {
      if (keyOk) checks.push(await checkRole(runtime, role, label, required));
      else checks.push(skipped(role, label, required, why));
    }
    if (options.live) {
      const webReady = ['search', 'fetch'].every((id) => checks.find((c) => c.id === id)?.status === 'ok');
      if (webReady) checks.push(...(await checkLive(runtime)));
      else
        for (const [id, label] of [
          ['live_search', 'Live web search'],
          ['live_fetch', 'Live web fetch'],
        ] as const)
          checks.push(skipped(id, label, true, 'needs the web search and fetch checks above to pass'));
    }
    if (usesFiles(config)) checks.push(...(await checkWorkspace(config)), ...(await checkInputRoots(config)));
    checks.push(...(await checkLedger(config, runtime.log)));
    if (config.ledgerUrl) checks.push(await checkSharedOutput(runtime));
    if (config.confirm.length > 0) {
      const message = `Confirmation before billed ${config.confirm.join(', ')} calls: asked by clients with elicitation (Claude Code, Cursor, VS Code, Codex); other clients, and stateless HTTP, are not asked`;
      const replayable = replayableConfirmations(config);
      checks.push(replayable ? warn('confirm', false, message, replayable) : ok('confirm', false, message));
    }
  } finally {
    await closeRuntime(runtime);
  }
  // A base URL may carry credentials (https://user:pass@host): they are secrets too.
  const clean = (text: string) => runtime.scrub(withoutCredentials(text));
  const scrubbed = checks.map((c) => ({ ...c, message: clean(c.message), fix: c.fix && clean(c.fix) }));
  return {
    ok: scrubbed.every((c) => !c.required || c.status === 'ok' || c.status === 'warn'),
    version: VERSION,
    base_url: runtime.service.client.shownBaseUrl,
    api_key: config.apiKey ? 'set' : 'not set',
    checks: scrubbed,
  };
}

const MARK: Record<CheckStatus, string> = { ok: '✓', warn: '!', fail: '✗', skip: '·' };

export function formatReport(report: DoctorReport): string {
  const lines = [
    `gateway-tools-mcp ${report.version} doctor`,
    `service ${report.base_url}, API key ${report.api_key}`,
    '',
  ];
  for (const check of report.checks) {
    lines.push(`${MARK[check.status]} ${check.message}`);
    if (check.fix && check.status !== 'ok') lines.push(`    fix: ${check.fix}`);
  }
  const failed = report.checks.filter((c) => c.required && (c.status === 'fail' || c.status === 'skip'));
  const warned = report.checks.filter((c) => c.status === 'warn').length;
  lines.push(
    '',
    report.ok
      ? `Ready: every required check passed${warned ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}.`
      : `Not ready: ${failed.filter((c) => c.status === 'fail').length} required check(s) failed. Fix the ✗ lines above and run doctor again.`,
  );
  // Without --live the providers were listed, not tried: a key the provider refuses shows only then.
  if (report.ok && !report.checks.some((c) => c.id === 'live_search'))
    lines.push(
      "The providers' own keys were not tried: `doctor --live` sends one search and one fetch (billed).",
    );
  return `${lines.join('\n')}\n`;
}
