import { Transform, type TransformCallback } from 'node:stream';
import type { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../log.js';

/**
 * The longest JSON-RPC line read from stdin. A legitimate audio_transcribe call carries up to
 * 20 MiB of audio as base64 (about 27 MB), more than the SDK's default of 10 MiB.
 */
export const MAX_STDIO_LINE_BYTES = 64 * 1024 * 1024;

/** Longer whitespace-only lines are passed on (and answered as unreadable): checking costs a decode. */
export const MAX_BLANK_LINE_BYTES = 1024;

/**
 * Hands the SDK's stdio transport whole lines, one chunk each. The SDK's buffer concatenates
 * every 64 KiB pipe chunk onto everything before it (a 28 MB line took 10 s of copying), and a
 * line past its limit makes it close itself and read nothing more. Here a line costs one copy,
 * and a line over `maxBytes` is skipped (reported through `onOversize`) while reading goes on.
 */
export class LineSplitter extends Transform {
  private parts: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onOversize: (bytes: number) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      this.keep(chunk.subarray(start, end + 1));
      this.endLine();
      start = end + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
    callback();
  }

  private keep(piece: Buffer): void {
    this.size += piece.length;
    // Past the limit the line is only counted, never held.
    if (this.size <= this.maxBytes) this.parts.push(piece);
    else this.parts = [];
  }

  private endLine(): void {
    if (this.size > this.maxBytes) this.onOversize(this.size);
    else {
      const line = Buffer.concat(this.parts, this.size);
      // A blank line is no message (and no parse error): some clients send them between messages.
      if (line.length > MAX_BLANK_LINE_BYTES || line.toString('utf8').trim() !== '') this.push(line);
    }
    this.parts = [];
    this.size = 0;
  }
}

/**
 * JSON-RPC wants an answer to a line that cannot be read, which the SDK's transport only
 * reports: -32700 for a line that is not JSON, -32600 for JSON that is not a JSON-RPC message or
 * a line over the limit. None of them has an id the answer could carry.
 */
export function answerUnreadableLines(transport: StdioServerTransport, log: Logger): (bytes: number) => void {
  const reply = (code: number, message: string) =>
    void transport
      .send({ jsonrpc: '2.0', error: { code, message } } as unknown as JSONRPCMessage)
      .catch(() => undefined);
  transport.onerror = (error: Error) => {
    if (error instanceof SyntaxError) {
      log.debug(`unreadable line on stdin: ${error.message}`);
      reply(ErrorCode.ParseError, 'Parse error: the line is not valid JSON.');
    } else if (error.name === 'ZodError') {
      log.debug('a JSON line on stdin is not a JSON-RPC message');
      reply(ErrorCode.InvalidRequest, 'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message.');
    } else {
      log.debug(`stdio transport error: ${error.message}`);
    }
  };
  return (bytes) => {
    const limit = `${MAX_STDIO_LINE_BYTES / 1024 / 1024} MiB`;
    log.warn(`skipped a ${bytes}-byte line on stdin: messages are limited to ${limit}`);
    reply(
      ErrorCode.InvalidRequest,
      `Invalid Request: the message is ${bytes} bytes, over the ${limit} limit; it was not read.`,
    );
  };
}
