import type { LoggingLevel } from '@modelcontextprotocol/server';
import type { Logger, LogLevel } from '../../lib/log.js';
import { SERVER_NAME } from '../../version.js';
import type { GatewayServer } from '../server.js';

/** MCP's levels, least severe first (RFC 5424's order). */
const SEVERITY: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];
const AS_MCP: Record<LogLevel, LoggingLevel> = {
  error: 'error',
  warn: 'warning',
  info: 'info',
  debug: 'debug',
};

/** What a client gets until it asks for another level: warnings and errors. */
export const DEFAULT_CLIENT_LOG_LEVEL: LoggingLevel = 'warning';

/**
 * Log lines for one connected client, as `notifications/message` (VS Code shows them in the
 * server's output). The client picks the least severe level it wants with `logging/setLevel`;
 * the stderr log is unaffected and keeps its own level. Lines are scrubbed of secrets like the
 * stderr log's.
 */
export class ClientLog {
  private threshold = SEVERITY.indexOf(DEFAULT_CLIENT_LOG_LEVEL);

  constructor(
    private readonly server: GatewayServer,
    private readonly scrub: (text: string) => string,
  ) {}

  get level(): LoggingLevel {
    return SEVERITY[this.threshold] as LoggingLevel;
  }

  /** What `logging/setLevel` asks for: lines from `level` up. */
  setLevel(level: LoggingLevel): void {
    this.threshold = SEVERITY.indexOf(level);
  }

  /**
   * Sends one line if the client asked for its level: the connection's, or `request.level` for a
   * 2026-07-28 request, which says its own (null: no lines). With `request.id` it travels on that
   * request's own stream (over Streamable HTTP, the only one sure to be open).
   */
  send(level: LogLevel, message: string, request: LineRequest = {}): void {
    const mcpLevel = AS_MCP[level];
    if (request.level === null) return;
    const threshold = request.level === undefined ? this.threshold : SEVERITY.indexOf(request.level);
    if (SEVERITY.indexOf(mcpLevel) < threshold) return;
    this.server
      .notification(
        {
          method: 'notifications/message',
          params: { level: mcpLevel, logger: SERVER_NAME, data: this.scrub(message) },
        },
        request.id === undefined ? undefined : { relatedRequestId: request.id },
      )
      // A client that has gone away gets no log lines; that is no error of its own.
      .catch(() => undefined);
  }
}

/** The request a log line is about: its id, and the level it asked for (2026-07-28). */
export interface LineRequest {
  id?: string | number;
  level?: LoggingLevel | null;
}

/**
 * A logger for work done on behalf of one client (a tool call): every line goes to the stderr log
 * (at its level) and to that client (at the client's).
 */
export function loggerFor(stderr: Logger, client: ClientLog, request: LineRequest = {}): Logger {
  const both = (level: LogLevel) => (message: string) => {
    stderr[level](message);
    client.send(level, message, request);
  };
  return {
    get level() {
      return stderr.level;
    },
    error: both('error'),
    warn: both('warn'),
    info: both('info'),
    debug: both('debug'),
  };
}
