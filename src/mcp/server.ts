import type {
  Implementation,
  JsonSchemaType,
  JsonSchemaValidator,
  Result,
  ServerContext,
  ServerOptions,
  ServerResult,
  StandardSchemaV1,
} from '@modelcontextprotocol/server';
import { ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { Logger } from '../lib/log.js';
import { checked } from './schema-sentences.js';

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

export type RequestExtra = ServerContext;
/** A request's schema: an object whose method is one literal, as the SDK's request schemas are. */
type RequestSchema = z.ZodObject<{ method: z.ZodLiteral<string> }>;
type Handler<T extends RequestSchema> = (
  request: z.output<T>,
  extra: RequestExtra,
) => ServerResult | Result | Promise<ServerResult | Result>;

/**
 * The SDK's Server (initialize, ping, cancellation, progress, logging, requests to the client with
 * their answers matched, timed out and cancelled), with the server's own request handlers
 * registered through handle().
 */
export class GatewayServer extends Server {
  /** Called before each of the server's own handlers, with the request's method and context. */
  onrequest?: (method: string, extra: RequestExtra) => void;

  constructor(
    info: Implementation,
    options: ServerOptions,
    private readonly log: Pick<Logger, 'error' | 'debug'>,
  ) {
    super(info, { jsonSchemaValidator: FLAT_FORM_VALIDATOR, ...options });
    this.onerror = (error) => log.debug(`protocol: ${error.message}`);
  }

  /**
   * Registers one of the server's own handlers, with two things the SDK does differently:
   * - params its method's schema refuses are answered -32602 (Invalid params) in one sentence per
   *   problem, naming the field (schema-sentences.ts), where the SDK would answer with zod's
   *   issues. The handler is registered in the SDK's custom-schema form, with a params schema of
   *   this server's own that words the problems; the SDK answers "Invalid params for <method>:"
   *   and them. For tools/call, the SDK's own check of the request comes first.
   * - a handler that throws anything but an RpcError (or the SDK's ProtocolError) is a bug: it is
   *   logged, and answered -32603 "Internal error" without its message, which could carry anything.
   */
  handle<T extends RequestSchema>(schema: T, handler: Handler<T>): void {
    const method = schema.shape.method.value;
    const params: StandardSchemaV1<Record<string, unknown>, z.output<T>> = {
      '~standard': {
        version: 1,
        vendor: 'gateway-tools-mcp',
        validate: (value) => {
          const request = { method, params: value };
          const check = checked(schema, request, 'params');
          return check.success ? { value: check.data } : { issues: [{ message: check.problems }] };
        },
      },
    };
    this.setRequestHandler(method, { params }, async (request, ctx) => {
      this.onrequest?.(method, ctx);
      try {
        return (await handler(request, ctx)) as Result;
      } catch (error) {
        if (isRpcError(error)) throw error;
        this.log.error(
          `${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        throw new RpcError(ProtocolErrorCode.InternalError, 'Internal error');
      }
    });
  }
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
