// The settings: each one's env variable, CLI flag, help line and zod schema (see config.ts for
// how they are read).
import { z } from 'zod';
import { parseHostEntry } from '../gateway/url-guard.js';
import { LOG_LEVELS } from '../lib/log.js';
import { CONFIRM_CHOICES, confirmKinds } from '../mcp/confirm.js';

/**
 * Every setting: one env variable, one CLI flag, one zod schema. The table is also the source of
 * `--help`, so the documentation cannot drift from what is parsed.
 */
export interface Setting {
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

export const rawSchema = z.object({
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
  sessionUnusedSeconds: intIn(1, 86_400).default(120),
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
  resultFormat: z
    .enum(['auto', 'text', 'structured'], { error: 'must be auto, text or structured' })
    .default('auto'),
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
  confirm: list
    .refine(
      (kinds) => kinds.every((k) => CONFIRM_CHOICES.includes(k.toLowerCase())),
      `must be kinds of billed call, comma-separated: ${CONFIRM_CHOICES.join(', ')}`,
    )
    .transform(confirmKinds)
    .default([]),
});
export type RawSettings = z.input<typeof rawSchema>;

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
    key: 'resultFormat',
    env: 'GATEWAY_RESULT_FORMAT',
    flag: '--result-format',
    help: 'auto (default: chosen by the client, see README), text (markdown only, no output schemas) or structured (structuredContent and text)',
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
    help: 'per-request timeout in ms, 1000-600000 (default 60000); speech waits 2x, video submits 2.5x, transcription 5x as long',
  },
  {
    key: 'maxRetries',
    env: 'GATEWAY_MAX_RETRIES',
    flag: '--max-retries',
    help: 'retries for retryable failures, 0-10 (default 2; never for video submits)',
  },
  {
    key: 'confirm',
    env: 'GATEWAY_CONFIRM',
    flag: '--confirm',
    help: 'ask the user before billed calls of these kinds: video, speech, transcription, chat, or all (default none); only clients with elicitation can ask (Claude Code, Cursor, VS Code, Codex), others are not asked',
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
    key: 'sessionUnusedSeconds',
    env: 'GATEWAY_SESSION_UNUSED_SECONDS',
    flag: '--session-unused-seconds',
    help: 'http transport: close an idle session that never called a tool after this long, 1-86400 (default 120)',
  },
  {
    key: 'shutdownGraceMs',
    env: 'GATEWAY_SHUTDOWN_GRACE_MS',
    flag: '--shutdown-grace-ms',
    help: 'http transport: on SIGTERM, how long running calls may finish before they are cancelled (default 10000)',
  },
];
