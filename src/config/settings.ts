// The settings, in one table: each one's environment variable, flag, schema, default and help.
// The zod object config.ts parses with, the flag lookup, `--help` (help.ts) and
// docs/configuration.md (scripts/configuration-doc.ts) are all made from it, so none can drift.
import { z } from 'zod';
import { parseHostEntry } from '../lib/addresses.js';
import { LOG_LEVELS } from '../lib/log.js';
import { isHttpUrl } from '../lib/urls.js';
import { DEFAULT_DUPLICATE_WINDOW_SECONDS, RETENTION_DAYS } from './billed-kinds.js';
import { CONFIRM_CHOICES, confirmKinds } from './confirm-kinds.js';
import { parseLimits } from './limits.js';
import { FIXED_DEFAULT_MODELS, modelIdSetting } from './model-ids.js';
import { parsePrices } from './prices.js';
import { TOOL_GROUPS } from './tool-groups.js';

/** The headings settings are shown under, in the order they are shown. */
export const SETTING_GROUPS = {
  gateway: 'The gateway',
  models: 'Default models',
  tools: 'Tools',
  ledger: 'Billed calls: the ledger, limits and prices',
  files: 'Files',
  server: 'Running',
  http: 'HTTP transport',
} as const;
export type SettingGroup = keyof typeof SETTING_GROUPS;

interface SettingText {
  env: `GATEWAY_${string}`;
  /** The flag, when not the variable's name without GATEWAY_, in lower case with dashes (`--base-url`). */
  flag?: `--${string}`;
  /** What it does, without its default or range: those are printed from `default` and the schema. */
  help: string;
  /** A credential: never shown in an error, and a warning when given as a flag. */
  secret?: boolean;
  /** The flag alone means true (`--stateless`); every other flag takes a value. */
  switch?: boolean;
}

interface FixedDefault<S extends z.ZodType> extends SettingText {
  schema: S;
  default: z.output<S>;
}

interface NoFixedDefault<S extends z.ZodType> extends SettingText {
  schema: S;
  /** What the server uses when the setting is unset, in words: it is worked out at run time. */
  computedDefault?: string;
}

/** A table row, with the field the zod object parses it with: defaulted or optional. */
function setting<S extends z.ZodType>(row: FixedDefault<S>): FixedDefault<S> & { field: z.ZodDefault<S> };
function setting<S extends z.ZodType>(
  row: NoFixedDefault<S>,
): NoFixedDefault<S> & { field: z.ZodOptional<S> };
function setting(row: FixedDefault<z.ZodType> | NoFixedDefault<z.ZodType>) {
  const field = 'default' in row ? row.schema.default(row.default as never) : row.schema.optional();
  return { ...row, field };
}

const list = z.string().transform((s) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean),
);
const intIn = (min: number, max: number) =>
  z.coerce
    .number({ error: 'must be a number' })
    .int('must be an integer')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);
/** A setting with a grammar of its own: its parser's first error is the message. */
const grammar = <T>(parse: (text: string) => { ok: true; value: T } | { ok: false; error: string }) =>
  z.string().transform((text, ctx) => {
    const parsed = parse(text);
    if (parsed.ok) return parsed.value;
    ctx.addIssue({ code: 'custom', message: parsed.error });
    return z.NEVER;
  });
const httpUrl = z
  .string()
  .trim()
  .superRefine((text, ctx) => {
    if (isHttpUrl(text)) return;
    const meant = withScheme(text);
    ctx.addIssue({
      code: 'custom',
      message: `must be an http:// or https:// URL${meant ? `: did you mean ${meant}?` : ''}`,
    });
  })
  .transform((s) => s.replace(/\/+$/, ''));

/**
 * The address a URL typed without its scheme means (`127.0.0.1:20128`, `localhost:20128`, a host
 * name): a person copies the address 9router prints, or its host and port, and the fix is one
 * prefix away. Credentials in it are left out of the suggestion, which is printed.
 */
function withScheme(text: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return undefined;
  try {
    const url = new URL(`http://${text}`);
    if (!url.hostname || url.username || url.password) return undefined;
    return `http://${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return undefined;
  }
}
const postgresUrl = z
  .string()
  .trim()
  .refine(
    isPostgresUrl,
    'must be a postgres:// or postgresql:// URL, e.g. postgres://user:password@host:5432/db',
  );

function isPostgresUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.host !== '';
  } catch {
    return false;
  }
}

/** The settings under the heading each is shown under (SETTING_GROUPS), in the order shown. */
const SETTING_TABLE = {
  gateway: {
    baseUrl: setting({
      env: 'GATEWAY_BASE_URL',
      schema: httpUrl,
      default: 'http://127.0.0.1:20128',
      help: 'the gateway, an http:// or https:// URL',
    }),
    apiKey: setting({
      env: 'GATEWAY_API_KEY',
      schema: z.string().trim().min(1, 'must not be empty'),
      help: 'bearer key for the gateway (prefer the variable: flags show in process lists)',
      secret: true,
    }),
    apiKeyFile: setting({
      env: 'GATEWAY_API_KEY_FILE',
      schema: z.string().trim().min(1),
      help: 'file holding the key, read when GATEWAY_API_KEY is unset',
    }),
    timeoutMs: setting({
      env: 'GATEWAY_TIMEOUT_MS',
      schema: intIn(1_000, 600_000),
      default: 60_000,
      help: 'per-request timeout in ms; speech waits 2x, video submits 2.5x, transcription 5x as long',
    }),
    maxRetries: setting({
      env: 'GATEWAY_MAX_RETRIES',
      schema: intIn(0, 10),
      default: 2,
      help:
        'retries of a failed call: free calls on 429/502/503/504 and connection failures; billed calls ' +
        '(searches and fetches included) only when they provably were not worked on (never sent, or rate limited)',
    }),
  },
  models: {
    searchModel: setting({
      env: 'GATEWAY_SEARCH_MODEL',
      schema: modelIdSetting,
      computedDefault: 'discovered from /v1/models/web',
      help: 'search provider, e.g. tavily',
    }),
    fetchModel: setting({
      env: 'GATEWAY_FETCH_MODEL',
      schema: modelIdSetting,
      computedDefault: 'discovered from /v1/models/web',
      help: 'fetch provider, e.g. jina-reader',
    }),
    videoModel: setting({
      env: 'GATEWAY_VIDEO_MODEL',
      schema: modelIdSetting,
      default: FIXED_DEFAULT_MODELS.video,
      help: 'video model; the gateway lists none',
    }),
    speechModel: setting({
      env: 'GATEWAY_SPEECH_MODEL',
      schema: modelIdSetting,
      computedDefault: 'discovered from /v1/models/tts',
      help: 'speech model for audio_speech',
    }),
    transcribeModel: setting({
      env: 'GATEWAY_TRANSCRIBE_MODEL',
      schema: modelIdSetting,
      computedDefault: 'discovered from /v1/models/stt',
      help: 'transcription model for audio_transcribe',
    }),
    chatModel: setting({
      env: 'GATEWAY_CHAT_MODEL',
      schema: modelIdSetting,
      computedDefault: 'the first model /v1/models lists, combos last',
      help: 'model for ask_model',
    }),
    summaryModel: setting({
      env: 'GATEWAY_SUMMARY_MODEL',
      schema: modelIdSetting,
      computedDefault:
        'GATEWAY_CHAT_MODEL, else the first small model (mini, nano, haiku, flash, lite, small) ' +
        '/v1/models lists, else the chat default',
      help: 'model answering web_fetch prompts',
    }),
  },
  tools: {
    tools: setting({
      env: 'GATEWAY_TOOLS',
      schema: list,
      computedDefault: 'all',
      help:
        `allow-list of groups (${TOOL_GROUPS.join(', ')}) or tool names, comma-separated; ` +
        'web_search and web_fetch are always added',
    }),
    disabledTools: setting({
      env: 'GATEWAY_DISABLED_TOOLS',
      flag: '--disable-tools',
      schema: list,
      default: [],
      help: 'deny-list of groups or tool names; web_search and web_fetch cannot be disabled',
    }),
    toolPrefix: setting({
      env: 'GATEWAY_TOOL_PREFIX',
      schema: z.string().regex(/^[A-Za-z0-9_-]{0,16}$/, 'must be at most 16 letters, digits, _ or -'),
      default: '',
      help: 'prefix for every tool name, e.g. gw_: at most 16 letters, digits, _ or -',
    }),
    resultFormat: setting({
      env: 'GATEWAY_RESULT_FORMAT',
      schema: z.enum(['auto', 'text', 'structured'], { error: 'must be auto, text or structured' }),
      default: 'auto',
      help:
        'what results carry: auto (chosen per client, see the README), text (markdown only, no output ' +
        'schemas) or structured (structuredContent and text)',
    }),
    views: setting({
      env: 'GATEWAY_VIEWS',
      schema: z.enum(['on', 'off'], { error: 'must be on or off' }),
      default: 'on',
      help:
        "players inside the client (MCP Apps): a video view with the job's progress and an audio view, " +
        'for clients that declare the extension (docs/views.md); off: no view, no extension declared',
    }),
    confirm: setting({
      env: 'GATEWAY_CONFIRM',
      schema: list
        .refine(
          (kinds) => kinds.every((k) => CONFIRM_CHOICES.includes(k.toLowerCase())),
          `must be kinds of billed call, comma-separated: ${CONFIRM_CHOICES.join(', ')}`,
        )
        .transform(confirmKinds),
      default: [],
      help:
        `ask the user before billed calls of these kinds, comma-separated: ${CONFIRM_CHOICES.join(', ')} ` +
        '(audio: speech and transcription); only clients with elicitation ask (Claude Code, Cursor, ' +
        'VS Code, Codex), others and a stateless HTTP server are not asked',
    }),
  },
  ledger: {
    ledgerDir: setting({
      env: 'GATEWAY_LEDGER_DIR',
      schema: z.string().trim().min(1),
      computedDefault:
        'ledger in the per-user data directory (~/.local/share/gateway-tools-mcp/ledger on Linux)',
      help:
        'where billed calls are recorded, before each is sent and with its outcome: one SQLite database ' +
        `(ledger.sqlite), calls kept ${RETENTION_DAYS} days; every server process of the user shares it, so give them all ` +
        'the same one, on a local disk',
    }),
    ledgerUrl: setting({
      env: 'GATEWAY_LEDGER_URL',
      schema: postgresUrl,
      help:
        'a PostgreSQL database (postgres://user:password@host:5432/db) to keep the ledger in instead of ' +
        'GATEWAY_LEDGER_DIR: every server process on every host that names it shares one ledger, one set ' +
        "of limits and one duplicate guard, timed by the database's clock",
      secret: true,
    }),
    limits: setting({
      env: 'GATEWAY_LIMITS',
      schema: grammar(parseLimits),
      default: [],
      help:
        'most billed calls per period, comma-separated kind=count/period, e.g. video=5/day,chat=300/hour: ' +
        'kinds video, speech, transcription, chat, search, fetch; periods hour and day (rolling, across ' +
        'processes), week and month (calendar, UTC, the week from Monday) and session (this process); ' +
        'cost=2.50/day limits the estimated cost (see GATEWAY_PRICES). The total for everyone sharing the ledger',
    }),
    limitsPerUser: setting({
      env: 'GATEWAY_LIMITS_PER_USER',
      schema: grammar(parseLimits),
      default: [],
      help:
        "each person's billed calls per period, as GATEWAY_LIMITS (e.g. video=3/day,cost=20/month), counted " +
        "for each person apart (an OAuth token's subject, else the local user); checked with GATEWAY_LIMITS in " +
        'the same transaction',
    }),
    budgetWebhook: setting({
      env: 'GATEWAY_BUDGET_WEBHOOK',
      schema: httpUrl,
      help:
        "a URL that hears, by a signed POST, when a billed call takes a limit (a person's or everyone's) past " +
        '80 % and 100 %: once per crossing, retried, never holding a call up (docs/money.md); kept out of ' +
        'logs and messages, as its path may be its only key',
      secret: true,
    }),
    budgetWebhookSecret: setting({
      env: 'GATEWAY_BUDGET_WEBHOOK_SECRET',
      schema: z.string().min(16, 'must be at least 16 characters'),
      help: 'the key GATEWAY_BUDGET_WEBHOOK signs its POSTs with (HMAC-SHA256 in X-Gateway-Signature)',
      secret: true,
    }),
    prices: setting({
      env: 'GATEWAY_PRICES',
      schema: grammar(parsePrices),
      default: [],
      help:
        'prices for cost estimates and cost limits, comma-separated [kind:]model=price/unit, e.g. ' +
        'xai/grok-imagine-video=0.05/second or chat:*=0.5/1m-tokens: * in a model matches anything; units ' +
        'call, second, minute, char, 1k-chars, 1m-chars, token, 1k-tokens, 1m-tokens',
    }),
    duplicateWindowSeconds: setting({
      env: 'GATEWAY_DUPLICATE_WINDOW_SECONDS',
      schema: intIn(0, 86_400),
      default: DEFAULT_DUPLICATE_WINDOW_SECONDS,
      help:
        'a billed call identical to one accepted this recently (same tool, model, prompt or text, inputs ' +
        'and options) is answered from the ledger instead of sent again; 0 turns the guard off',
    }),
  },
  files: {
    outputDir: setting({
      env: 'GATEWAY_OUTPUT_DIR',
      schema: z.string().trim().min(1),
      default: 'gateway-output',
      help:
        "where saved files go; a relative one goes under the client's first root, else under the " +
        'working directory (the per-user data directory when that is / or home)',
    }),
    inputRoots: setting({
      env: 'GATEWAY_INPUT_ROOTS',
      schema: list,
      computedDefault: "the client's roots, else the working directory (none when that is / or home)",
      help: "directories local files may be read from, comma-separated; when set, used instead of the client's roots",
    }),
    maxUploadMb: setting({
      env: 'GATEWAY_MAX_UPLOAD_MB',
      schema: intIn(1, 4096),
      default: 100,
      help: 'largest file (local or downloaded) audio_transcribe uploads, in MiB',
    }),
    allowPrivateUrls: setting({
      env: 'GATEWAY_ALLOW_PRIVATE_URLS',
      schema: list.refine(
        (hosts) => hosts.every((h) => h === '*' || parseHostEntry(h)),
        'must be host names or addresses, optionally with :port, comma-separated (or *)',
      ),
      default: [],
      help:
        'hosts on loopback or private networks that audio URLs and video downloads may reach, ' +
        "comma-separated, e.g. 127.0.0.1:8080, or * for any; the gateway's own origin always may",
    }),
  },
  server: {
    transport: setting({
      env: 'GATEWAY_TRANSPORT',
      schema: z.enum(['stdio', 'http'], { error: 'must be stdio or http' }),
      default: 'stdio',
      help: 'stdio or http',
    }),
    logLevel: setting({
      env: 'GATEWAY_LOG_LEVEL',
      schema: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }),
      default: 'info',
      help: `stderr log level: ${LOG_LEVELS.join(', ')} (clients choose their own with logging/setLevel)`,
    }),
  },
  http: {
    host: setting({
      env: 'GATEWAY_HOST',
      schema: z.string().trim().min(1),
      default: '127.0.0.1',
      help: 'address to bind',
    }),
    port: setting({
      env: 'GATEWAY_PORT',
      schema: intIn(0, 65535),
      default: 3000,
      help: 'port to listen on; 0 takes any free port',
    }),
    stateless: setting({
      env: 'GATEWAY_STATELESS',
      schema: z
        .enum(['true', 'false', '1', '0', ''], { error: 'must be true or false' })
        .transform((v) => v === 'true' || v === '1'),
      default: false,
      help:
        'no sessions, for replicas behind a load balancer; the server then cannot ask the client ' +
        'anything (no confirmations, no roots)',
      switch: true,
    }),
    mcpToken: setting({
      env: 'GATEWAY_MCP_TOKEN',
      schema: z.string().min(16, 'must be at least 16 characters'),
      help:
        'bearer token clients must send, 16 characters or more (required off loopback unless ' +
        'GATEWAY_OAUTH_ISSUER is set; with it, accepted beside OAuth tokens)',
      secret: true,
    }),
    mcpTokenUser: setting({
      env: 'GATEWAY_MCP_TOKEN_USER',
      schema: z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
      computedDefault: 'local:<the operating-system user running the server>',
      help:
        'who calls with GATEWAY_MCP_TOKEN (and over stdio), as each call records its caller; with OAuth ' +
        "the caller is the token's subject",
    }),
    oauthIssuer: setting({
      env: 'GATEWAY_OAUTH_ISSUER',
      schema: z.string().trim().refine(isHttpUrl, 'must be an http:// or https:// URL'),
      help:
        'an OAuth 2.1 authorization server (its issuer URL, exactly as its tokens name it): the HTTP ' +
        'transport then takes its access tokens, checked for issuer, audience, expiry and signature ' +
        '(docs/http.md, "A service for a team"); needs GATEWAY_PUBLIC_URL',
    }),
    publicUrl: setting({
      env: 'GATEWAY_PUBLIC_URL',
      schema: httpUrl,
      help:
        "this service's own base URL as clients reach it (e.g. https://mcp.example.com); tokens must be " +
        'issued for <it>/mcp (RFC 8707), and its host name is accepted in the Host header',
    }),
    oauthAudience: setting({
      env: 'GATEWAY_OAUTH_AUDIENCE',
      schema: z.string().trim().min(1, 'must not be empty'),
      computedDefault: 'GATEWAY_PUBLIC_URL/mcp',
      help:
        "the audience (aud) tokens must carry, when the authorization server cannot put this service's " +
        "URL there (Entra ID's api://<application id>)",
    }),
    oauthRequireScopes: setting({
      env: 'GATEWAY_OAUTH_REQUIRE_SCOPES',
      schema: z
        .enum(['true', 'false', '1', '0', ''], { error: 'must be true or false' })
        .transform((v) => v === 'true' || v === '1'),
      default: false,
      help:
        'a tool call needs the scope of its tool family in the token (search, fetch, video, audio, ' +
        'models; usage needs none), else 403 insufficient_scope',
    }),
    oauthClientId: setting({
      env: 'GATEWAY_OAUTH_CLIENT_ID',
      schema: z.string().trim().min(1, 'must not be empty'),
      help: "this service's client id at the authorization server, to introspect opaque tokens (RFC 7662)",
    }),
    oauthClientSecret: setting({
      env: 'GATEWAY_OAUTH_CLIENT_SECRET',
      schema: z.string().trim().min(1, 'must not be empty'),
      help: 'the secret of GATEWAY_OAUTH_CLIENT_ID, for introspection',
      secret: true,
    }),
    allowedHosts: setting({
      env: 'GATEWAY_ALLOWED_HOSTS',
      schema: list,
      default: [],
      help: 'extra Host names to accept, e.g. mcp.example.com, or * for any (needs a token)',
    }),
    allowedOrigins: setting({
      env: 'GATEWAY_ALLOWED_ORIGINS',
      schema: list,
      default: [],
      help: 'extra browser origins to accept, e.g. https://app.example.com, or * for any (needs a token)',
    }),
    maxSessions: setting({
      env: 'GATEWAY_MAX_SESSIONS',
      schema: intIn(1, 10_000),
      default: 100,
      help: 'most open sessions (stateless: most concurrent requests)',
    }),
    sessionIdleSeconds: setting({
      env: 'GATEWAY_SESSION_IDLE_SECONDS',
      schema: intIn(1, 86_400),
      default: 1800,
      help: 'close a session idle this long',
    }),
    sessionUnusedSeconds: setting({
      env: 'GATEWAY_SESSION_UNUSED_SECONDS',
      schema: intIn(1, 86_400),
      default: 120,
      help: 'close an idle session that never called a tool after this long',
    }),
    shutdownGraceMs: setting({
      env: 'GATEWAY_SHUTDOWN_GRACE_MS',
      schema: intIn(0, 600_000),
      default: 10_000,
      help: 'on SIGINT or SIGTERM, how long running calls may finish before they are cancelled',
    }),
  },
} satisfies Record<SettingGroup, object>;

type Table = typeof SETTING_TABLE;
export type SettingKey = { [G in SettingGroup]: keyof Table[G] }[SettingGroup];
type Row<K extends SettingKey> = {
  [G in SettingGroup]: K extends keyof Table[G] ? Table[G][K] : never;
}[SettingGroup];
type Fields = { [K in SettingKey]: Row<K>['field'] };

const ROWS = Object.values(SETTING_TABLE).flatMap((rows) => Object.entries(rows));

/** Every setting's parser: the table's schemas with their defaults. */
export const rawSchema = z.object(Object.fromEntries(ROWS.map(([key, row]) => [key, row.field])) as Fields);
export type RawSettings = z.input<typeof rawSchema>;

/** One row of the table, as the flag lookup, `--help` and the docs read it. */
export interface Setting extends SettingText {
  group: SettingGroup;
  key: SettingKey;
  flag: `--${string}`;
  schema: z.ZodType;
  /** The value used when the setting is unset; absent when there is none fixed. */
  default?: unknown;
  computedDefault?: string;
}

/** The table's rows, in the order `--help` and the docs show them within a group. */
export const SETTINGS: readonly Setting[] = Object.entries(SETTING_TABLE).flatMap(([group, rows]) =>
  Object.entries(rows).map(([key, row]) => ({
    ...row,
    group: group as SettingGroup,
    key: key as SettingKey,
    flag: row.flag ?? `--${row.env.slice('GATEWAY_'.length).toLowerCase().replaceAll('_', '-')}`,
  })),
);
