import { describe, expect, it } from 'vitest';
import { ResponseStreamReader } from '../../src/gateway/endpoints/responses-stream.js';

const STREAM = [
  'event: response.created\ndata: {"type":"response.created"}\n\n',
  'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hel"}\n\n',
  'event: response.output_text.delta\r\ndata: {"type":"response.output_text.delta","delta":"lo"}\r\n\r\n',
  'event: response.completed\ndata: {"type":"response.completed","response":{"status":"completed","model":"m","output":[{"type":"message","content":[{"type":"output_text","text":"Hello"}]}],"usage":{"input_tokens":3,"output_tokens":2}}}\n\n',
].join('');

function read(chunks: string[]) {
  const reader = new ResponseStreamReader('m');
  for (const chunk of chunks) reader.push(chunk);
  reader.push('\n\n');
  return reader.finish();
}

describe('Responses stream reader, fed in pieces', () => {
  it('reads the same answer however the stream is cut into chunks', () => {
    const whole = read([STREAM]);
    expect(whole.text).toBe('Hello');
    // Every cut point, including between the two newlines that end an event (CRLF pairs stay whole).
    for (let cut = 1; cut < STREAM.length; cut++) {
      if (STREAM[cut - 1] === '\r' && STREAM[cut] === '\n') continue;
      expect(read([STREAM.slice(0, cut), STREAM.slice(cut)]), `cut at ${cut}`).toEqual(whole);
    }
    expect(read([...STREAM])).toEqual(whole); // one character at a time
  });

  it('reads a 64 MiB event that never ends in one pass, not by rescanning it per piece', () => {
    const reader = new ResponseStreamReader('m');
    reader.push('data: ');
    const chunk = 'x'.repeat(64 * 1024);
    // 64 MiB in 64 KiB chunks: a rescan of everything per chunk would take minutes, not moments.
    for (let i = 0; i < 1024; i++) reader.push(chunk);
    reader.push('\n\n');
    expect(reader.finish().text).toBe('');
  });
});
