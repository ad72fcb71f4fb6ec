import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

export interface MultipartFile {
  field: string;
  filename: string;
  contentType: string;
  size: number;
  stream: () => Readable;
}

export interface MultipartBody {
  contentType: string;
  length: number;
  stream: Readable;
}

/** Builds a streamed multipart/form-data body: text fields, then one file, never buffered whole. */
export function multipartBody(
  fields: Record<string, string | undefined>,
  file: MultipartFile,
): MultipartBody {
  const boundary = `----gateway-tools-${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`,
      ),
    );
  }
  const head = Buffer.concat([
    ...parts,
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.filename)}"\r\n` +
        `Content-Type: ${file.contentType}\r\n\r\n`,
    ),
  ]);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* generate() {
    yield head;
    yield* file.stream() as AsyncIterable<Buffer>;
    yield tail;
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + file.size + tail.length,
    stream: Readable.from(generate(), { objectMode: false }),
  };
}

function quote(value: string): string {
  return value.replace(/[\r\n"\\]/g, '_');
}
