import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { LOG_LEVELS } from './log.js';
import { parseHostEntry } from './service/url-guard.js';

/**
 * Every setting: one env variable, one CLI flag, one zod schema. The table is also the source of
 * `--help`, so the documentation cannot drift from what is parsed.
 */
interface Setting {
  key: keyof RawSettings;
  env: string;
  flag: string;
  help: string;
  secret?: boolean;
}

const list = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);
const modelId = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .regex(/^[A-Za-z0-9._:/@+-]+$/, 'must be a model id such as provider/model (no spaces)');
const intIn = (min: number, max: number) =>
  z.coerce
    .number({ error: 'must be a number' })
    .int('must be an integer')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);
const httpUrl = z
  .string()
  .trim()
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http:// or https:// URL')
  .transform((s) => s.replace(/\/+$/, ''));

const rawSchema = z.object({
  transport: z.enum(['stdio', 'http'], { error: 'must be stdio or http' }).default('stdio'),
  host: z.string().trim().min(1).default('127.0.0.1'),
  port: intIn(0, 65535).default(3000),
  stateless: z
    .enum(['true', 'false', '1', '0', ''], { error: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true' || v === '1'),
  mcpToken: z.string().min(16, 'must be at least 16 characters').optional(),
  allowedHosts: list.default([]),
  allowedOrigins: list.default([]),
  maxSessions: intIn(1, 10_000).default(100),
  sessionIdleSeconds: intIn(1, 86_400).default(1800),
  shutdownGraceMs: intIn(0, 600_000).default(10_000),
  baseUrl: httpUrl.default('http://127.0.0.1:20128'),
  apiKey: z.string().trim().min(1, 'must not be empty').optional(),
  apiKeyFile: z.string().trim().min(1).optional(),
  searchModel: modelId.optional(),
  fetchModel: modelId.optional(),
  videoModel: modelId.default('xai/grok-imagine-video'),
  speechModel: modelId.optional(),
  transcribeModel: modelId.optional(),
  chatModel: modelId.optional(),
  summaryModel: modelId.optional(),
  tools: list.optional(),
  disabledTools: list.default([]),
  toolPrefix: z
    .string()
    .regex(/^[A-Za-z0-9_-]{0,16}$/, 'must be at most 16 letters, digits, _ or -')
    .default(''),
  outputDir: z.string().trim().min(1).default('gateway-output'),
  inputRoots: list.optional(),
  maxUploadMb: intIn(1, 4096).default(100),
  allowPrivateUrls: list
    .refine(
      (hosts) => hosts.every((h) => h === '*' || parseHostEntry(h)),
      'must be host names or addresses, optionally with :port, comma-separated (or *)',
    )
    .default([]),
  timeoutMs: intIn(1_000, 600_000).default(60_000),
  maxRetries: intIn(0, 10).default(2),
  logLevel: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
});
type RawSettings = z.input<typeof rawSchema>;

export const SETTINGS: readonly Setting[] = [
  {
    key: 'baseUrl',
    env: 'GATEWAY_BASE_URL',
    flag: '--base-url',
    help: 'the backing service (default http://127.0.0.1:20128)',
  },
  {
    key: 'apiKey',
    env: 'GATEWAY_API_KEY',
    flag: '--api-key',
    help: 'bearer key for the service (prefer the env variable: flags show in process lists)',
    secret: true,
  },
  {
    key: 'apiKeyFile',
    env: 'GATEWAY_API_KEY_FILE',
    flag: '--api-key-file',
    help: 'file holding the key (used when GATEWAY_API_KEY is unset)',
  },
  {
    key: 'searchModel',
    env: 'GATEWAY_SEARCH_MODEL',
    flag: '--search-model',
    help: 'search provider, e.g. tavily (default: discovered from /v1/models/web)',
  },
  {
    key: 'fetchModel',
    env: 'GATEWAY_FETCH_MODEL',
    flag: '--fetch-model',
    help: 'fetch provider, e.g. jina-reader (default: discovered from /v1/models/web)',
  },
  {
    key: 'videoModel',
    env: 'GATEWAY_VIDEO_MODEL',
    flag: '--video-model',
    help: 'video model (default xai/grok-imagine-video)',
  },
  {
    key: 'speechModel',
    env: 'GATEWAY_SPEECH_MODEL',
    flag: '--speech-model',
    help: 'default speech model (default: discovered from /v1/models/tts)',
  },
  {
    key: 'transcribeModel',
    env: 'GATEWAY_TRANSCRIBE_MODEL',
    flag: '--transcribe-model',
    help: 'default transcription model (default: discovered from /v1/models/stt)',
  },
  {
    key: 'chatModel',
    env: 'GATEWAY_CHAT_MODEL',
    flag: '--chat-model',
    help: 'default model for ask_model (default: discovered from /v1/models)',
  },
  {
    key: 'summaryModel',
    env: 'GATEWAY_SUMMARY_MODEL',
    flag: '--summary-model',
    help: 'small model answering web_fetch prompts (default: the chat model)',
  },
  {
    key: 'tools',
    env: 'GATEWAY_TOOLS',
    flag: '--tools',
    help: 'allow-list of groups or tools, comma-separated: search,fetch,video,audio,models,chat (default all; web_search and web_fetch are always added)',
  },
  {
    key: 'disabledTools',
    env: 'GATEWAY_DISABLED_TOOLS',
    flag: '--disable-tools',
    help: 'deny-list of groups or tools (web_search and web_fetch cannot be disabled)',
  },
  {
    key: 'toolPrefix',
    env: 'GATEWAY_TOOL_PREFIX',
    flag: '--tool-prefix',
    help: 'prefix for every tool name, e.g. gw_ (default none)',
  },
  {
    key: 'outputDir',
    env: 'GATEWAY_OUTPUT_DIR',
    flag: '--output-dir',
    help: 'where saved files go (default ./gateway-output)',
  },
  {
    key: 'inputRoots',
    env: 'GATEWAY_INPUT_ROOTS',
    flag: '--input-roots',
    help: 'comma-separated directories local files may be read from (default the working directory)',
  },
  {
    key: 'maxUploadMb',
    env: 'GATEWAY_MAX_UPLOAD_MB',
    flag: '--max-upload-mb',
    help: 'largest file (local or downloaded) audio_transcribe uploads, in MiB, 1-4096 (default 100)',
  },
  {
    key: 'allowPrivateUrls',
    env: 'GATEWAY_ALLOW_PRIVATE_URLS',
    flag: '--allow-private-urls',
    help: 'hosts on loopback/private networks that audio URLs and video downloads may reach, e.g. 127.0.0.1:8080 (default none: only the gateway itself; * = any)',
  },
  {
    key: 'timeoutMs',
    env: 'GATEWAY_TIMEOUT_MS',
    flag: '--timeout-ms',
    help: 'per-request timeout in ms, 1000-600000 (default 60000); speech waits 2x, transcription 5x as long',
  },
  {
    key: 'maxRetries',
    env: 'GATEWAY_MAX_RETRIES',
    flag: '--max-retries',
    help: 'retries for retryable failures, 0-10 (default 2; never for video submits)',
  },
  {
    key: 'logLevel',
    env: 'GATEWAY_LOG_LEVEL',
    flag: '--log-level',
    help: 'stderr log level: error, warn, info, debug (default info)',
  },
  { key: 'transport', env: 'GATEWAY_TRANSPORT', flag: '--transport', help: 'stdio (default) or http' },
  {
    key: 'host',
    env: 'GATEWAY_HOST',
    flag: '--host',
    help: 'http transport: address to bind (default 127.0.0.1)',
  },
  { key: 'port', env: 'GATEWAY_PORT', flag: '--port', help: 'http transport: port (default 3000)' },
  {
    key: 'stateless',
    env: 'GATEWAY_STATELESS',
    flag: '--stateless',
    help: 'http transport: no sessions, for replicas behind a load balancer',
  },
  {
    key: 'mcpToken',
    env: 'GATEWAY_MCP_TOKEN',
    flag: '--mcp-token',
    help: 'http transport: bearer token clients must send (required off loopback)',
    secret: true,
  },
  {
    key: 'allowedHosts',
    env: 'GATEWAY_ALLOWED_HOSTS',
    flag: '--allowed-hosts',
    help: 'http transport: extra Host names to accept, e.g. mcp.example.com (* = any, needs a token)',
  },
  {
    key: 'allowedOrigins',
    env: 'GATEWAY_ALLOWED_ORIGINS',
    flag: '--allowed-origins',
    help: 'http transport: extra browser origins to accept, e.g. https://app.example.com',
  },
  {
    key: 'maxSessions',
    env: 'GATEWAY_MAX_SESSIONS',
    flag: '--max-sessions',
    help: 'http transport: most open sessions (stateless: concurrent requests), 1-10000 (default 100)',
  },
  {
    key: 'sessionIdleSeconds',
    env: 'GATEWAY_SESSION_IDLE_SECONDS',
    flag: '--session-idle-seconds',
    help: 'http transport: close a session idle this long, 1-86400 (default 1800)',
  },
  {
    key: 'shutdownGraceMs',
    env: 'GATEWAY_SHUTDOWN_GRACE_MS',
    flag: '--shutdown-grace-ms',
    help: 'http transport: on SIGTERM, how long running calls may finish before they are cancelled (default 10000)',
  },
];

export type Config = Omit<z.output<typeof rawSchema>, 'apiKeyFile' | 'outputDir' | 'inputRoots'> & {
  apiKey: string | undefined;
  outputDir: string;
  inputRoots: string[];
  cwd: string;
};

export type Command = 'serve' | 'doctor' | 'help' | 'version';

export interface ParsedCommandLine {
  command: Command;
  config: Config;
  json: boolean;
}

/** A configuration error: the CLI prints `message` as one line and exits with status 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const BOOLEAN_FLAGS = new Set(['--stateless']);

export function parseCommandLine(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string = process.cwd(),
): ParsedCommandLine {
  const fromFlags: Partial<Record<keyof RawSettings, string>> = {};
  const origin: Partial<Record<keyof RawSettings, string>> = {};
  let command: Command = 'serve';
  let json = false;

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') command = 'help';
    else if (arg === '--version' || arg === '-v') command = command === 'help' ? 'help' : 'version';
    else if (arg === 'doctor' && command === 'serve') command = 'doctor';
    else if (arg === '--json') json = true;
    else if (arg.startsWith('--')) {
      const [flag, inline] = splitFlag(arg);
      const setting = SETTINGS.find((s) => s.flag === flag);
      if (!setting) throw new ConfigError(`unknown option ${flag} (see --help)`);
      let value = inline;
      if (value === undefined) {
        if (BOOLEAN_FLAGS.has(flag)) value = 'true';
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

  const parsed = rawSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = issue.path[0] as keyof RawSettings;
    const setting = SETTINGS.find((s) => s.key === key)!;
    const shown = setting.secret ? '' : ` (got "${String(raw[key]).slice(0, 80)}")`;
    const where = origin[key] ?? setting.env;
    const alias = where === setting.env ? setting.flag : setting.env;
    throw new ConfigError(`invalid ${where} (${alias}): ${issue.message}${shown}`);
  }
  const { apiKeyFile, outputDir, inputRoots, ...rest } = parsed.data;
  return {
    command,
    json,
    config: {
      ...rest,
      apiKey: rest.apiKey ?? readKeyFile(apiKeyFile, origin.apiKeyFile ?? 'GATEWAY_API_KEY_FILE'),
      outputDir: resolve(cwd, outputDir),
      inputRoots: (inputRoots && inputRoots.length > 0 ? inputRoots : [cwd]).map((r) => resolve(cwd, r)),
      cwd,
    },
  };
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

export function helpText(version: string): string {
  const width = Math.max(...SETTINGS.map((s) => `${s.flag} <value>`.length));
  const rows = SETTINGS.map((s) => {
    const left = BOOLEAN_FLAGS.has(s.flag) ? s.flag : `${s.flag} <value>`;
    return `  ${left.padEnd(width)}  ${s.env}\n  ${' '.repeat(width)}  ${s.help}`;
  });
  return [
    `gateway-tools-mcp ${version} — an AI gateway's web search, web fetch, video, speech and`,
    'transcription as MCP tools.',
    '',
    'Usage:',
    '  gateway-tools-mcp [options]            serve MCP (stdio by default)',
    '  gateway-tools-mcp doctor [--json]      check the service, key, models and output dir',
    '  gateway-tools-mcp --help | --version',
    '',
    'Options (each also read from the environment variable beside it; flags win):',
    ...rows,
    '',
  ].join('\n');
}
