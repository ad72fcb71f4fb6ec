// Who is asking, per request, in either era of MCP. A 2025-era client says its name and
// capabilities once, at initialize; a 2026-07-28 client says them on every request, in the `_meta`
// envelope the SDK lifts into ctx.mcpReq.envelope (with the log level it wants for that request).
// Everything that depends on the client reads it through here.

import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  type ClientCapabilities,
  type Implementation,
  LOG_LEVEL_META_KEY,
  type LoggingLevel,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server';
import type { GatewayServer, RequestExtra } from '../server.js';

export interface RequestClient {
  /** A 2026-07-28 request: no server-to-client requests; input is asked for with input_required. */
  modern: boolean;
  capabilities: ClientCapabilities | undefined;
  info: Implementation | undefined;
  /**
   * The least severe log level this request wants, on a 2026-07-28 request (none: no log lines);
   * undefined on a 2025-era one, whose level is the connection's (logging/setLevel).
   */
  logLevel: LoggingLevel | null | undefined;
}

export function requestClient(server: GatewayServer, extra: RequestExtra): RequestClient {
  const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined;
  if (envelope?.[PROTOCOL_VERSION_META_KEY] === undefined) {
    return {
      modern: false,
      capabilities: server.getClientCapabilities(),
      info: server.getClientVersion(),
      logLevel: undefined,
    };
  }
  return {
    modern: true,
    capabilities: envelope[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined,
    info: envelope[CLIENT_INFO_META_KEY] as Implementation | undefined,
    logLevel: (envelope[LOG_LEVEL_META_KEY] as LoggingLevel | undefined) ?? null,
  };
}
