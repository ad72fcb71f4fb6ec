import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  JSONRPCMessageSchema,
} from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { type Era, MODERN } from '../../harness/eras.js';
import { anyJson, hostileString, hugeString, mixedString } from './hostile.js';

/** Where a request's id goes: the test puts a fresh, unique id there when it sends the line. */
export const ID_SLOT = '\u0000id-slot';

/** What the server must do with a line. */
export type Expected =
  | { kind: 'parse-error' }
  | { kind: 'invalid-request' }
  | { kind: 'method-not-found'; id: string | number }
  | { kind: 'answer'; id: string | number }
  | { kind: 'nothing' };

/** What a 2026-07-28 client puts in every request's `_meta`. */
export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** Methods this server handles in the 2026-07-28 era (it has no initialize, ping or logging/setLevel). */
const HANDLED_2026 = [
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/read',
  'resources/templates/list',
];

/** Methods this server handles (everything else is "Method not found"). */
const HANDLED = [
  'ping',
  'initialize',
  'tools/list',
  'tools/call',
  'logging/setLevel',
  'resources/list',
  'resources/read',
  'resources/templates/list',
];
const METHODS = [
  ...HANDLED,
  'resources/subscribe',
  'prompts/list',
  'completion/complete',
  'sampling/createMessage',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'tools/CALL',
  'rpc.discover',
  '',
];
const TOOLS = ['web_search', 'web_fetch', 'list_models', 'video_status', 'audio_speech', 'nope', ''];

const optional = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined, freq: 4 });
const params = fc.oneof(
  fc.record({
    name: fc.oneof(fc.constantFrom(...TOOLS), anyJson),
    arguments: optional(
      fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 }), anyJson),
    ),
  }),
  fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 3 }),
  anyJson,
);

/** Objects shaped like JSON-RPC messages (as JSON text), each part sometimes right and sometimes wrong. */
export const messageLike = fc
  .record(
    {
      jsonrpc: fc.oneof({ arbitrary: fc.constant('2.0'), weight: 6 }, fc.constantFrom('1.0', 2, null)),
      id: fc.oneof({ arbitrary: fc.constant(ID_SLOT), weight: 6 }, fc.constantFrom(null, 1.5, [], {}, true)),
      method: fc.oneof({ arbitrary: fc.constantFrom(...METHODS), weight: 6 }, mixedString, anyJson),
      params: optional(params),
      result: optional(anyJson),
      error: optional(fc.record({ code: fc.integer(), message: fc.string() })),
    },
    { requiredKeys: [] },
  )
  .map((m) => JSON.stringify(m));

/** Raw stdin lines: garbage, plain JSON values, message-shaped JSON, and (rarely) huge lines. */
export const rawLine: fc.Arbitrary<string> = fc
  .oneof(
    { arbitrary: messageLike, weight: 12 },
    { arbitrary: hostileString, weight: 3 },
    { arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)), weight: 2 },
    { arbitrary: fc.constantFrom('{', '[', '{"jsonrpc":"2.0"', '\u0000', '\ufeff{}', '[]', '{}'), weight: 2 },
    { arbitrary: hugeString, weight: 1 },
  )
  // One line each: a newline would make it two (those cases are covered by lines of their own).
  .map((line) => line.replace(/[\r\n]/g, ' '));

/** The unique id for a line, when it has an id slot. */
export function withId(line: string, id: string): string {
  return line.split(JSON.stringify(ID_SLOT)).join(JSON.stringify(id));
}

/**
 * A line as a 2026-07-28 client sends it: a request or notification whose params are absent or an
 * object carries the era's envelope as its `_meta` (other lines are left as they are).
 */
export function enveloped(line: string): string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return line;
  }
  if (!isObject(value) || typeof value.method !== 'string') return line;
  if (value.params !== undefined && !isObject(value.params)) return line;
  return JSON.stringify({ ...value, params: { ...value.params, _meta: ENVELOPE } });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What JSON-RPC (and this server's handlers) require for a line, judged by the SDK's schemas. In
 * the 2026-07-28 era a request without the envelope is answered with an error, whatever its method.
 */
export function expectationFor(line: string, era: Era = '2025-era'): Expected {
  // Blank lines, however long, are no message.
  if (line.trim() === '') return { kind: 'nothing' };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { kind: 'parse-error' };
  }
  if (!JSONRPCMessageSchema.safeParse(value).success) return { kind: 'invalid-request' };
  // The order the SDK's Protocol sorts messages in.
  if (isJSONRPCResultResponse(value) || isJSONRPCErrorResponse(value)) return { kind: 'nothing' };
  if (isJSONRPCRequest(value)) {
    if (era === MODERN) {
      const meta = (value.params as { _meta?: unknown } | undefined)?._meta;
      if (JSON.stringify(meta) !== JSON.stringify(ENVELOPE)) return { kind: 'answer', id: value.id };
      return HANDLED_2026.includes(value.method)
        ? { kind: 'answer', id: value.id }
        : { kind: 'method-not-found', id: value.id };
    }
    return HANDLED.includes(value.method)
      ? { kind: 'answer', id: value.id }
      : { kind: 'method-not-found', id: value.id };
  }
  if (isJSONRPCNotification(value)) return { kind: 'nothing' };
  return { kind: 'invalid-request' };
}
