import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { z } from 'zod';
import { withoutCredentials } from '../lib/urls.js';
import { ProxySettingError, type ProxySettings, readProxySettings } from './proxy-settings.js';
import { type RawSettings, rawSchema, SETTINGS } from './settings.js';
import { isWorkspaceDir, userDataDir } from './user-dirs.js';

export type Config = Omit<
  z.output<typeof rawSchema>,
  'apiKeyFile' | 'outputDir' | 'inputRoots' | 'ledgerDir'
> & {
  apiKey: string | undefined;
  /** Where the ledger of billed calls is (absolute). */
  ledgerDir: string;
  /** Where files are saved when the client offers no roots (absolute). */
  outputDir: string;
  /** GATEWAY_OUTPUT_DIR as given: a relative one goes under the client's first root when it has roots. */
  outputDirSetting: string;
  /** Where local files may be read from when the client offers no roots; none without a workspace. */
  inputRoots: string[];
  /** GATEWAY_INPUT_ROOTS was set: it wins over the client's roots. */
  inputRootsSet: boolean;
  cwd: string;
  /** From HTTPS_PROXY / HTTP_PROXY / NO_PROXY (lowercase too); undefined when no proxy applies. */
  proxy?: ProxySettings;
  /** The working directory can stand for the workspace (it is neither / nor the home directory). */
  cwdIsWorkspace: boolean;
};

export type Command = 'serve' | 'doctor' | 'usage' | 'ledger-export' | 'help' | 'version';

export interface ParsedCommandLine {
  command: Command;
  config: Config;
  json: boolean;
  /** `doctor --live`: also one real (billed) search and fetch. */
  live: boolean;
  /** `ledger export --since`: as written (ledger-export.ts reads it). */
  since?: string;
  /** `ledger export --user`: one person's calls. */
  user?: string;
  /** `ledger export --format`: JSON Lines (the default) or CSV. */
  format?: 'jsonl' | 'csv';
  /** `usage --by-user`: each person's use and per-person limits. */
  byUser?: boolean;
}

/** A configuration error: the CLI prints `message` as one line and exits with status 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function parseCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string = process.cwd(),
): ParsedCommandLine {
  const fromFlags: Partial<Record<keyof RawSettings, string>> = {};
  const origin: Partial<Record<keyof RawSettings, string>> = {};
  let command: Command = 'serve';
  let json = false;
  let live = false;
  let since: string | undefined;
  const exportOptions: { user?: string; format?: 'jsonl' | 'csv' } = {};
  let byUser = false;

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') command = 'help';
    else if (arg === '--version' || arg === '-v') command = command === 'help' ? 'help' : 'version';
    else if ((arg === 'doctor' || arg === 'usage') && command === 'serve') command = arg;
    else if (arg === '--json') json = true;
    else if (arg === '--live') live = true;
    else if (arg === 'ledger' && command === 'serve') {
      if (argv[i + 1] !== 'export')
        throw new ConfigError(
          'ledger takes one command: ledger export [--since TIME] [--user ID] [--format jsonl|csv]',
        );
      i++;
      command = 'ledger-export';
    } else if (arg === '--since' || arg.startsWith('--since=')) {
      if (command !== 'ledger-export') throw new ConfigError('--since belongs to ledger export (see --help)');
      since = arg.includes('=') ? arg.slice('--since='.length) : argv[++i];
      if (!since) throw new ConfigError('option --since needs a value');
    } else if (
      arg === '--user' ||
      arg === '--format' ||
      arg.startsWith('--user=') ||
      arg.startsWith('--format=')
    ) {
      const [name, inline] = splitFlag(arg);
      if (command !== 'ledger-export') throw new ConfigError(`${name} belongs to ledger export (see --help)`);
      const value = inline ?? argv[++i];
      if (!value) throw new ConfigError(`option ${name} needs a value`);
      if (name === '--user') exportOptions.user = value;
      else if (value === 'jsonl' || value === 'csv') exportOptions.format = value;
      else throw new ConfigError(`invalid --format "${value.slice(0, 20)}": jsonl or csv`);
    } else if (arg === '--by-user') {
      if (command !== 'usage') throw new ConfigError('--by-user belongs to usage (see --help)');
      byUser = true;
    } else if (arg.startsWith('--')) {
      const [flag, inline] = splitFlag(arg);
      const setting = SETTINGS.find((s) => s.flag === flag);
      if (!setting) throw new ConfigError(`unknown option ${flag} (see --help)`);
      let value = inline;
      if (value === undefined) {
        if (setting.switch) value = 'true';
        else {
          value = argv[++i];
          if (value === undefined) throw new ConfigError(`option ${flag} needs a value`);
        }
      }
      fromFlags[setting.key] = value;
      origin[setting.key] = flag;
    } else throw new ConfigError(`unexpected argument "${arg}" (see --help)`);
  }

  const raw: Record<string, string> = {};
  for (const s of SETTINGS) {
    const flagValue = fromFlags[s.key];
    const envValue = env[s.env];
    if (flagValue !== undefined) raw[s.key] = flagValue;
    else if (envValue !== undefined && envValue !== '') {
      raw[s.key] = envValue;
      origin[s.key] = s.env;
    }
  }

  if (live && command !== 'doctor') throw new ConfigError('--live belongs to doctor (see --help)');
  const parsed = rawSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path[0] as keyof RawSettings;
    const setting = SETTINGS.find((s) => s.key === key)!;
    // A URL typed without its scheme may still start with user:password@.
    const said = withoutCredentials(String(raw[key])).replace(/^[^/:?#@\s]*:[^/?#@\s]*@/, '***@');
    const shown = setting.secret ? '' : ` (got "${said.slice(0, 80)}")`;
    const where = origin[key] ?? setting.env;
    const alias = where === setting.env ? setting.flag : setting.env;
    throw new ConfigError(`invalid ${where} (${alias}): ${issue.message}${shown}`);
  }
  if (parsed.data.budgetWebhook && !parsed.data.budgetWebhookSecret)
    throw new ConfigError(
      'GATEWAY_BUDGET_WEBHOOK needs GATEWAY_BUDGET_WEBHOOK_SECRET: the key its POSTs are signed with (HMAC-SHA256)',
    );
  const { apiKeyFile, outputDir, inputRoots, ledgerDir, ...rest } = parsed.data;
  const cwdIsWorkspace = isWorkspaceDir(cwd);
  const inputRootsSet = inputRoots !== undefined && inputRoots.length > 0;
  return {
    command,
    json,
    live,
    ...(since !== undefined ? { since } : {}),
    ...exportOptions,
    ...(byUser ? { byUser } : {}),
    config: {
      ...rest,
      apiKey: rest.apiKey ?? readKeyFile(apiKeyFile, origin.apiKeyFile ?? 'GATEWAY_API_KEY_FILE'),
      outputDir: resolve(cwdIsWorkspace ? cwd : userDataDir(env), outputDir),
      outputDirSetting: outputDir,
      ledgerDir: resolve(cwd, ledgerDir ?? join(userDataDir(env), 'ledger')),
      inputRoots: inputRootsSet ? inputRoots.map((r) => resolve(cwd, r)) : cwdIsWorkspace ? [cwd] : [],
      inputRootsSet,
      cwd,
      proxy: proxyFrom(env),
      cwdIsWorkspace,
    },
  };
}

function proxyFrom(env: NodeJS.ProcessEnv): ProxySettings | undefined {
  try {
    return readProxySettings(env);
  } catch (error) {
    if (error instanceof ProxySettingError) throw new ConfigError(error.message);
    throw error;
  }
}

/**
 * Secret settings given as command-line flags. Any local user can read a process's arguments
 * (`ps`, /proc/<pid>/cmdline), unlike its environment, so the CLI warns about these.
 */
export function secretFlagsGiven(argv: readonly string[]): { flag: string; env: string }[] {
  const given = new Set(argv.map((arg) => splitFlag(arg)[0]));
  return SETTINGS.filter((s) => s.secret && given.has(s.flag)).map(({ flag, env }) => ({ flag, env }));
}

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf('=');
  return eq === -1 ? [arg, undefined] : [arg.slice(0, eq), arg.slice(eq + 1)];
}

function readKeyFile(path: string | undefined, where: string): string | undefined {
  if (!path) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ConfigError(`invalid ${where}: cannot read ${path} (${code})`);
  }
  const key = text.trim();
  if (!key) throw new ConfigError(`invalid ${where}: ${path} is empty`);
  if (/\s/.test(key)) throw new ConfigError(`invalid ${where}: ${path} must hold only the key (one line)`);
  return key;
}
