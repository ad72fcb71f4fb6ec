// A streaming multipart/form-data parser. The file part is counted and hashed as it passes and
// never kept, so an upload of any size costs the same memory; only small text fields are held.
import { createHash, type Hash } from 'node:crypto';
import type { RecordedFile } from './types.js';

export type MultipartResult =
  | { ok: true; fields: Record<string, string>; file: RecordedFile | null }
  | { ok: false; error: string };

const MAX_FIELD_BYTES = 1024 * 1024;
const MAX_HEADER_BYTES = 16 * 1024;
const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

export function multipartBoundary(contentType: string | undefined): string | null {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType.trim())) return null;
  const match = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  return boundary && boundary.length <= 200 ? boundary : null;
}

interface PartHeaders {
  name: string;
  filename: string | undefined;
  type: string;
}

function dispositionParams(value: string): Map<string, string> {
  const params = new Map<string, string>();
  const pattern = /;\s*([\w*.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (const match of value.matchAll(pattern)) {
    const key = match[1]?.toLowerCase();
    if (key) params.set(key, (match[2] ?? match[3] ?? '').replace(/\\(.)/g, '$1').trim());
  }
  const extended = params.get('filename*');
  if (extended) {
    // RFC 5987 form: charset'language'percent-encoded-value
    const encoded = extended.split("'")[2];
    if (encoded !== undefined) {
      try {
        params.set('filename', decodeURIComponent(encoded));
      } catch {
        // A malformed extended name leaves the plain filename in place.
      }
    }
  }
  return params;
}

function parsePartHeaders(text: string): PartHeaders | null {
  let disposition: string | undefined;
  let type = 'application/octet-stream';
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-disposition') disposition = value;
    if (name === 'content-type' && value) type = value;
  }
  if (!disposition || !/^form-data\b/i.test(disposition)) return null;
  const params = dispositionParams(disposition);
  const name = params.get('name');
  if (name === undefined) return null;
  return { name, filename: params.get('filename'), type };
}

/** Receives one part's bytes; file parts hash and count, text fields collect (bounded). */
interface PartCollector {
  push(data: Buffer): string | null;
  end(): void;
}

type ParserState = 'preamble' | 'boundary' | 'headers' | 'body' | 'done';

class MultipartParser {
  readonly fields: Record<string, string> = {};
  file: RecordedFile | null = null;
  state: ParserState = 'preamble';
  private readonly delimiter: Buffer;
  // The body starts with "--boundary"; a leading CRLF lets one delimiter pattern match every boundary.
  private buffer: Buffer = CRLF;
  private part: PartCollector | null = null;

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  /** Consumes a chunk as far as the current state allows; returns an error text or null. */
  feed(chunk: Buffer): string | null {
    this.buffer = this.buffer.length > 0 ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (;;) {
      const step = this.step();
      if (step !== 'continue') return step;
    }
  }

  private step(): string | null | 'continue' {
    const { delimiter } = this;
    switch (this.state) {
      case 'preamble': {
        const at = this.buffer.indexOf(delimiter);
        if (at < 0) {
          this.buffer = this.buffer.subarray(Math.max(0, this.buffer.length - delimiter.length + 1));
          return null;
        }
        this.buffer = this.buffer.subarray(at + delimiter.length);
        this.state = 'boundary';
        return 'continue';
      }
      case 'boundary': {
        if (this.buffer.length < 2) return null;
        if (this.buffer[0] === 0x2d && this.buffer[1] === 0x2d) {
          this.state = 'done';
          return null;
        }
        const eol = this.buffer.indexOf(CRLF);
        if (eol < 0) return this.buffer.length > 1024 ? 'malformed boundary line' : null;
        this.buffer = this.buffer.subarray(eol + 2);
        this.state = 'headers';
        return 'continue';
      }
      case 'headers': {
        const end = this.buffer.indexOf(HEADER_END);
        if (end < 0) return this.buffer.length > MAX_HEADER_BYTES ? 'part headers too large' : null;
        const headers = parsePartHeaders(this.buffer.subarray(0, end).toString('utf8'));
        if (!headers) return 'part without a form-data name';
        this.buffer = this.buffer.subarray(end + HEADER_END.length);
        this.part = this.startPart(headers);
        this.state = 'body';
        return 'continue';
      }
      case 'body': {
        const part = this.part;
        if (!part) return 'parser lost its part';
        const at = this.buffer.indexOf(delimiter);
        if (at < 0) {
          // Hold back what may be the start of a delimiter; pass everything before it on.
          const keep = Math.min(this.buffer.length, delimiter.length - 1);
          const error = part.push(this.buffer.subarray(0, this.buffer.length - keep));
          this.buffer = this.buffer.subarray(this.buffer.length - keep);
          return error;
        }
        const error = part.push(this.buffer.subarray(0, at));
        if (error) return error;
        part.end();
        this.part = null;
        this.buffer = this.buffer.subarray(at + delimiter.length);
        this.state = 'boundary';
        return 'continue';
      }
      case 'done':
        return null;
    }
  }

  private startPart(headers: PartHeaders): PartCollector {
    if (headers.filename !== undefined || headers.name === 'file') {
      const hash: Hash = createHash('sha256');
      let size = 0;
      return {
        push: (data) => {
          size += data.length;
          hash.update(data);
          return null;
        },
        end: () => {
          if (headers.name !== 'file' || this.file) return;
          this.file = {
            name: headers.filename ?? 'file',
            type: headers.type,
            size,
            sha256: hash.digest('hex'),
          };
        },
      };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    return {
      push: (data) => {
        size += data.length;
        if (size > MAX_FIELD_BYTES) return `field ${headers.name} is too large`;
        chunks.push(data);
        return null;
      },
      end: () => {
        this.fields[headers.name] = Buffer.concat(chunks).toString('utf8');
      },
    };
  }
}

export async function parseMultipart(
  source: AsyncIterable<Buffer>,
  boundary: string,
): Promise<MultipartResult> {
  const parser = new MultipartParser(boundary);
  let failure: string | null = null;
  for await (const chunk of source) {
    // After a failure or the closing boundary the rest is drained so the reply can still be sent.
    if (failure || parser.state === 'done') continue;
    failure = parser.feed(chunk);
  }
  if (failure) return { ok: false, error: failure };
  if (parser.state !== 'done') return { ok: false, error: 'unexpected end of multipart body' };
  return { ok: true, fields: parser.fields, file: parser.file };
}
