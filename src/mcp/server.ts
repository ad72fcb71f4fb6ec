import { Server, type ServerOptions } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
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

export type RequestExtra = RequestHandlerExtra<ServerRequest | Request, ServerNotification | Notification>;
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
   *   problem, naming the field (schema-sentences.ts). The SDK answers them -32603 with zod's
   *   issues as JSON. The request schema given to the SDK is one of this server's own, which
   *   checks the params with the method's schema and throws that answer; the SDK sends an
   *   error's own code. For tools/call, this check runs before the SDK's own, which then passes.
   * - a handler that throws anything but an RpcError (or the SDK's McpError) is a bug: it is
   *   logged, and answered -32603 "Internal error" without its message, which could carry anything.
   */
  handle<T extends RequestSchema>(schema: T, handler: Handler<T>): void {
    const method = schema.shape.method.value;
    const refusing = z.looseObject({ method: z.literal(method) }).check((payload) => {
      const params = checked(schema, payload.value, 'params');
      if (!params.success)
        throw new RpcError(ErrorCode.InvalidParams, `Invalid params for ${method}: ${params.problems}`);
    });
    this.setRequestHandler(refusing, async (request, extra) => {
      this.onrequest?.(method, extra);
      try {
        return await handler(schema.parse(request), extra);
      } catch (error) {
        if (isRpcError(error)) throw error;
        this.log.error(
          `${method} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
        throw new RpcError(ErrorCode.InternalError, 'Internal error');
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
