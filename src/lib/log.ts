// One logger, to stderr only: stdout belongs to JSON-RPC on the stdio transport.

import type { Scrub } from './secrets.js';

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
  level: LogLevel;
}

export function createLogger(level: LogLevel, scrub: Scrub = (t) => t): Logger {
  const rank = LOG_LEVELS.indexOf(level);
  const write = (at: LogLevel) => (message: string) => {
    if (LOG_LEVELS.indexOf(at) > rank) return;
    process.stderr.write(`[gateway-tools-mcp] ${at}: ${scrub(message)}\n`);
  };
  return { level, error: write('error'), warn: write('warn'), info: write('info'), debug: write('debug') };
}
