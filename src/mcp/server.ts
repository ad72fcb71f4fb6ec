import { Server, type ServerOptions } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type AnyObjectSchema,
  getLiteralValue,
  getObjectShape,
  type SchemaOutput,
} from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  type Implementation,
  type Notification,
  type Request,
  type Result,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { z } from 'zod';
import type { Logger } from '../lib/log.js';
import { checked } from '../lib/schema-sentences.js';

/** A JSON-RPC error a handler means to send as it is (any other thrown error is -32603). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export type RequestExtra = RequestHandlerExtra<ServerRequest | Request, ServerNotification | Notification>;
type Handler<T extends AnyObjectSchema> = (
  request: SchemaOutput<T>,
  extra: RequestExtra,
) => ServerResult | Result | Promise<ServerResult | Result>;

/**
 * The SDK's Server (initialize, ping, cancellation, progress, logging, requests to the client with
 * their answers matched, timed out and cancelled), with two things it does differently kept:
 * - a request whose params do not fit its method's schema is answered -32602 (Invalid params)
 *   in one sentence per problem, naming the field (lib/schema-sentences.ts), where the SDK answers
 *   -32603, or for tools/call -32602, with zod's issue list pretty-printed as JSON;
 * - a handler that throws anything but an RpcError (or the SDK's McpError) is a bug: it is
 *   logged and answered -32603 "Internal error", without its message, which could carry anything.
 * Both by overriding setRequestHandler, through which the SDK registers its own handlers too.
 * tools/call is the exception: the Server checks its params itself, before any handler of ours
 * runs (see looseRequest for how its answer is worded).
 */
export class GatewayServer extends Server {
  private bugLog: Pick<Logger, 'error'> | undefined;
  /** Called before each request's handler, with the request's method and context. */
  onrequest?: (method: string, extra: RequestExtra) => void;

  constructor(info: Implementation, options: ServerOptions, log: Pick<Logger, 'error' | 'debug'>) {
    super(info, { jsonSchemaValidator: FLAT_FORM_VALIDATOR, ...options });
    this.bugLog = log;
    this.onerror = (error) => log.debug(`protocol: ${error.message}`);
  }

  override setRequestHandler<T extends AnyObjectSchema>(schema: T, handler: Handler<T>): void {
    const method = methodOf(schema);
    const strict = method === 'tools/call' ? undefined : schema;
    super.setRequestHandler(looseRequest(method) as unknown as T, async (request, extra) => {
      const checked = strict ? paramsChecked(strict, request, method) : request;
      this.onrequest?.(method, extra);
      try {
        return await handler(checked as SchemaOutput<T>, extra);
      } catch (error) {
        if (isRpcError(error)) throw error;
        this.bugLog?.error(
          `${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        throw new RpcError(ErrorCode.InternalError, 'Internal error');
      }
    });
  }
}

function methodOf(schema: AnyObjectSchema): string {
  const literal = getObjectShape(schema)?.method;
  const method = literal ? getLiteralValue(literal) : undefined;
  if (typeof method !== 'string') throw new Error('a request schema needs a method literal');
  return method;
}

const loose = new Map<string, z.ZodType>();

/**
 * What the SDK parses a request with before the handler: the method only, every field kept.
 *
 * For tools/call it is also where the params are checked. The SDK's Server checks them itself,
 * with its CallToolRequestSchema, before any handler of ours, and answers a failure -32602 with
 * zod's issue list pretty-printed as JSON inside the message. This schema runs before that check
 * (the Protocol parses each request with it first), so it makes the same check, with the same
 * SDK schema, and throws the RpcError with a sentence instead, which the Protocol sends as it is.
 * A zod check that throws stops the parse there; the SDK's own check then only ever passes.
 */
function looseRequest(method: string): z.ZodType {
  let schema = loose.get(method);
  if (!schema) {
    const base = z.looseObject({ method: z.literal(method) });
    schema = method === 'tools/call' ? base.check((payload) => void toolCallChecked(payload.value)) : base;
    loose.set(method, schema);
  }
  return schema;
}

/** A tools/call request as the SDK's schema takes it, or the RpcError that says what is wrong. */
function toolCallChecked(request: unknown): void {
  const args = (request as { params?: { arguments?: unknown } }).params?.arguments;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Invalid params for tools/call: arguments must be a JSON object of the tool's parameters, e.g. {"query": "…"}; got ${jsonKind(args)}`,
    );
  }
  paramsChecked(CallToolRequestSchema, request, 'tools/call');
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function paramsChecked(schema: AnyObjectSchema, request: unknown, method: string): unknown {
  const parsed = checked(schema as unknown as z.ZodType, request, { under: 'params' });
  if (parsed.success) return parsed.data;
  throw new RpcError(ErrorCode.InvalidParams, `Invalid params for ${method}: ${parsed.problems}`);
}

function isRpcError(error: unknown): boolean {
  return error instanceof Error && Number.isSafeInteger((error as { code?: unknown }).code);
}

/**
 * Checks what a client answers an elicitation with, in place of the SDK's default (Ajv, which the
 * bundle leaves out). The server only asks for flat forms (a confirmation has no fields at all):
 * an object whose given fields have the declared primitive types.
 */
const FLAT_FORM_VALIDATOR = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const properties = (schema.properties ?? {}) as Record<string, { type?: string }>;
    return (input: unknown) => {
      const ok =
        typeof input === 'object' &&
        input !== null &&
        !Array.isArray(input) &&
        Object.entries(input).every(([key, value]) => {
          const type = properties[key]?.type;
          if (!type) return true;
          return type === 'integer' ? Number.isInteger(value) : typeof value === type;
        });
      return ok
        ? { valid: true, data: input as T, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: 'the answer does not fit the form' };
    };
  },
};
