import type { Readable, Writable } from 'node:stream';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { MAX_JSON_DEPTH, nestsTooDeep } from '../lib/json-depth.js';
import type { Logger } from '../lib/log.js';

/**
 * The longest JSON-RPC line read from stdin. A legitimate audio_transcribe call carries up to
 * 20 MiB of audio as base64 (about 27 MB), more than the SDK's default of 10 MiB.
 */
export const MAX_STDIO_LINE_BYTES = 64 * 1024 * 1024;

/**
 * MCP over a byte stream in and out, one JSON-RPC message per line, in place of the SDK's stdio
 * transport, which differs in three ways that matter here:
 * - its buffer concatenates every 64 KiB pipe chunk onto everything before it (a 28 MB line took
 *   10 s of copying); here a line costs one copy;
 * - a line past its limit makes it close itself and read nothing more; here a line over
 *   `maxBytes` is only counted, then skipped and answered, and reading goes on;
 * - it only reports lines it cannot read; JSON-RPC wants an answer (without an id, as there is
 *   none to carry): -32700 for a line that is not JSON, -32600 for JSON that is not a JSON-RPC
 *   message and for a line over the limit.
 * Blank lines, which some clients send between messages, are no message and get no answer.
 */
export class LineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;

  private parts: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly log: Logger,
    private readonly maxBytes = MAX_STDIO_LINE_BYTES,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    const line = `${JSON.stringify(message)}\n`;
    return new Promise((resolve) => {
      if (this.output.write(line)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    this.input.pause();
    this.parts = [];
    this.onclose?.();
  }

  private readonly onInputError = (error: Error) => this.onerror?.(error);

  private readonly onData = (chunk: Buffer) => {
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      this.keep(chunk.subarray(start, end));
      this.endLine();
      start = end + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  };

  private keep(piece: Buffer): void {
    this.size += piece.length;
    // Past the limit the line is only counted, never held.
    if (this.size <= this.maxBytes) this.parts.push(piece);
    else this.parts = [];
  }

  private endLine(): void {
    const { parts, size } = this;
    this.parts = [];
    this.size = 0;
    if (size > this.maxBytes) this.refuseOversize(size);
    else
      this.receive((parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size)).toString('utf8'));
  }

  private receive(line: string): void {
    if (line.trim() === '') return;
    if (nestsTooDeep(line)) {
      this.reply(
        ProtocolErrorCode.ParseError,
        `Parse error: the message nests deeper than ${MAX_JSON_DEPTH} levels.`,
      );
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (error) {
      this.log.debug(`unreadable line on stdin: ${(error as Error).message}`);
      this.reply(ProtocolErrorCode.ParseError, 'Parse error: the line is not valid JSON.');
      return;
    }
    const message = isPlainRequest(json)
      ? { success: true as const, data: json }
      : JSONRPCMessageSchema.safeParse(json);
    if (!message.success) {
      this.log.debug('a JSON line on stdin is not a JSON-RPC message');
      this.reply(
        ProtocolErrorCode.InvalidRequest,
        'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message.',
      );
      return;
    }
    try {
      this.onmessage?.(message.data);
    } catch (error) {
      this.onerror?.(error as Error);
    }
  }

  private refuseOversize(bytes: number): void {
    const limit = `${this.maxBytes / 1024 / 1024} MiB`;
    this.log.warn(`skipped a ${bytes}-byte line on stdin: messages are limited to ${limit}`);
    this.reply(
      ProtocolErrorCode.InvalidRequest,
      `Invalid Request: the message is ${bytes} bytes, over the ${limit} limit; it was not read.`,
    );
  }

  private reply(code: number, message: string): void {
    void this.send({ jsonrpc: '2.0', error: { code, message } } as unknown as JSONRPCMessage);
  }
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The common request or notification, recognised without the SDK's zod union: exact keys, a
 * string method, an integer or string id, params absent or an object whose `_meta` is absent or
 * carries only a valid progress token. Everything this accepts, JSONRPCMessageSchema accepts
 * unchanged; everything else goes through that schema.
 */
export function isPlainRequest(json: unknown): json is JSONRPCMessage {
  if (!isJsonObject(json) || json.jsonrpc !== '2.0' || typeof json.method !== 'string') return false;
  for (const key in json) if (!REQUEST_KEYS.has(key)) return false;
  if ('id' in json && !(typeof json.id === 'string' || Number.isSafeInteger(json.id))) return false;
  const params = json.params;
  if (params === undefined) return true;
  if (!isJsonObject(params)) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  if (!isJsonObject(meta)) return false;
  for (const key in meta) if (key !== 'progressToken') return false;
  const token = meta.progressToken;
  return token === undefined || typeof token === 'string' || Number.isSafeInteger(token);
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
