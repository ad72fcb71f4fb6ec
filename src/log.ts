/** One logger, to stderr only: stdout belongs to JSON-RPC on the stdio transport. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
  level: LogLevel;
}

type Scrub = (text: string) => string;

export function createLogger(level: LogLevel, scrub: Scrub = (t) => t): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const write = (at: LogLevel) => (message: string) => {
    if (LOG_LEVELS.indexOf(at) > rank) return;
    process.stderr.write(`[gateway-tools-mcp] ${at}: ${scrub(message)}\n`);
  };
  return { level, error: write('error'), warn: write('warn'), info: write('info'), debug: write('debug') };
}

/** Builds a function that replaces every secret (and anything shaped like a bearer token) with ***. */
export function secretScrubber(secrets: readonly (string | undefined)[]): Scrub {
  const known = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4);
  return (text) => {
    let out = text;
    for (const secret of known) out = out.split(secret).join('***');
    return out.replace(/(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1***');
  };
}
