// A small multipart/form-data reader for the fake upstream: requests here are test-sized, so the
// body is read whole. Text fields by name; a file part as `{ filename, type, bytes, text }`.
export interface FilePart {
  filename: string;
  type: string;
  bytes: number;
  /** The file's bytes as latin1 text (tests put spoken words in their fake audio). */
  text: string;
}

export type MultipartFields = Record<string, string | FilePart>;

export function readMultipart(raw: Buffer, contentType: string | undefined): MultipartFields | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  if (!/^multipart\/form-data/i.test(contentType ?? '') || !boundary) return undefined;
  const delimiter = `--${boundary[1] ?? boundary[2]}`;
  const fields: MultipartFields = {};
  for (const part of raw.toString('latin1').split(delimiter).slice(1)) {
    if (part.startsWith('--')) break;
    const headerEnd = part.indexOf('\r\n\r\n');
    if (headerEnd < 0) continue;
    const head = part.slice(0, headerEnd);
    const body = part.slice(headerEnd + 4).replace(/\r\n$/, '');
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    if (!name) continue;
    const filename = /filename="([^"]*)"/i.exec(head)?.[1];
    if (filename === undefined) fields[name] = Buffer.from(body, 'latin1').toString('utf8');
    else {
      const type = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1] ?? 'application/octet-stream';
      fields[name] = { filename, type, bytes: Buffer.byteLength(body, 'latin1'), text: body.slice(0, 4096) };
    }
  }
  return fields;
}
