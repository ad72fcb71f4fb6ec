import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, ResourceLink } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESOURCE_BYTES } from '../../../src/files/read-saved-file.js';
import { useReferenceService } from '../../harness/gateway.js';
import {
  type Connected,
  connectInMemory,
  connectStdio,
  structuredOf,
  tempDir,
} from '../../harness/harness.js';
import { connectHttp, disconnect, HTTP_KINDS, startHttpCli } from '../../harness/http-harness.js';
import { synthesizeAudio } from '../../reference-service/index.js';

// Saved files as MCP resources: every file a tool saves is listed to the session that made it
// and readable by the URI the tool returned, through the protocol (so a client on another machine
// gets it too), and nothing else on the server's disk is.
const reference = useReferenceService();

const SPEECH = { text: 'Resources over the wire', model: 'openai/tts-1/alloy' };

async function speak(client: Client): Promise<{ link: ResourceLink; path: string }> {
  const result = (await client.callTool({ name: 'audio_speech', arguments: SPEECH })) as CallToolResult;
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  const link = result.content.find((c): c is ResourceLink => c.type === 'resource_link');
  if (!link) throw new Error('no resource_link in the result');
  return { link, path: structuredOf<{ file_path: string }>(result).file_path };
}

const expectedAudio = () => synthesizeAudio(SPEECH.text, 'mp3').toString('base64');

describe('resources in memory', () => {
  let cwd: string;
  let outputDir: string;
  let conn: Connected;
  beforeAll(async () => {
    cwd = tempDir('gtm-res-');
    outputDir = join(cwd, 'gateway-output');
    conn = await connectInMemory({ ...reference.env, CWD: cwd });
  });
  afterAll(async () => {
    await conn.close();
  });

  it('declares resources and lists nothing before a tool saved a file', async () => {
    expect(conn.client.getServerCapabilities()?.resources).toEqual({ listChanged: true });
    // Clients that show the model only structured content (file_path) still learn the URI's form.
    expect(conn.client.getInstructions()).toContain('as the resource gateway-tools://output/<file name>');
    expect(await conn.client.listResources()).toEqual({ resources: [] });
    expect((await conn.client.listResourceTemplates()).resourceTemplates).toEqual([
      expect.objectContaining({ uriTemplate: 'gateway-tools://output/{name}', name: 'saved-file' }),
    ]);
  });

  it('lists a saved file and reads it under the URI the tool returned', async () => {
    const { link, path } = await speak(conn.client);
    expect(link.uri).toBe(`gateway-tools://output/${basename(path)}`);
    const { resources } = await conn.client.listResources();
    expect(resources).toEqual([
      {
        uri: link.uri,
        name: basename(path),
        mimeType: 'audio/mpeg',
        description: 'Speech by openai/tts-1/alloy',
        size: readFileSync(path).length,
      },
    ]);
    const read = await conn.client.readResource({ uri: link.uri });
    expect(read.contents).toEqual([{ uri: link.uri, mimeType: 'audio/mpeg', blob: expectedAudio() }]);
  });

  it('reads a saved transcript as text', async () => {
    writeFileSync(join(cwd, 'talk.mp3'), synthesizeAudio('spoken words', 'mp3'));
    const result = (await conn.client.callTool({
      name: 'audio_transcribe',
      arguments: { file_path: 'talk.mp3', response_format: 'srt' },
    })) as CallToolResult;
    const link = result.content.find((c): c is ResourceLink => c.type === 'resource_link');
    expect(link?.uri).toMatch(/^gateway-tools:\/\/output\/talk-transcript-[\d-]+\.srt$/);
    const read = await conn.client.readResource({ uri: link?.uri as string });
    const path = structuredOf<{ file_path: string }>(result).file_path;
    expect(read.contents).toEqual([
      { uri: link?.uri, mimeType: 'application/x-subrip', text: readFileSync(path, 'utf8') },
    ]);
  });

  it('lists a file only to the session that saved it, and reads it for any session of the same workspace', async () => {
    const other = await connectInMemory({ ...reference.env, CWD: cwd });
    try {
      const { link } = await speak(conn.client);
      expect((await other.client.listResources()).resources).toEqual([]);
      expect((await other.client.readResource({ uri: link.uri })).contents).toEqual([
        { uri: link.uri, mimeType: 'audio/mpeg', blob: expectedAudio() },
      ]);
    } finally {
      await other.close();
    }
  });

  it('reads nothing but files saved in the output directory', async () => {
    const outside = join(cwd, 'secret-20260101-120000.txt');
    writeFileSync(outside, 'not for clients');
    mkdirSync(outputDir, { recursive: true });
    writeFileSync(join(outputDir, '.env'), 'KEY=1');
    writeFileSync(join(outputDir, 'notes.txt'), 'a file the user put here');
    symlinkSync(outside, join(outputDir, 'link-20260101-120000.txt'));
    symlinkSync('/etc', join(outputDir, 'etc-20260101-120000.d'));
    mkdirSync(join(outputDir, 'dir-20260101-120000.txt'));
    execFileSync('mkfifo', [join(outputDir, 'fifo-20260101-120000.txt')]);
    for (const uri of [
      'file:///etc/passwd',
      `file://${outside}`,
      'gateway-tools://output/../secret-20260101-120000.txt',
      'gateway-tools://output/%2e%2e%2fsecret-20260101-120000.txt',
      'gateway-tools://output/..%2Fsecret-20260101-120000.txt',
      'gateway-tools://output/.env',
      'gateway-tools://output/notes.txt',
      'gateway-tools://output/link-20260101-120000.txt',
      'gateway-tools://output/etc-20260101-120000.d',
      'gateway-tools://output/dir-20260101-120000.txt',
      'gateway-tools://output/fifo-20260101-120000.txt',
      'gateway-tools://output/missing-20260101-120000.mp3',
      'gateway-tools://other/x-20260101-120000.txt',
      'gateway-tools://output/%E0%A4%A',
    ]) {
      await expect(conn.client.readResource({ uri }), uri).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining('Resource not found'),
      });
    }
  });

  it('refuses a file over the size limit with a clear error', async () => {
    const name = 'video-big-20260101-120000.mp4';
    mkdirSync(outputDir, { recursive: true });
    writeFileSync(join(outputDir, name), '');
    truncateSync(join(outputDir, name), MAX_RESOURCE_BYTES + 1);
    await expect(conn.client.readResource({ uri: `gateway-tools://output/${name}` })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(
        /is 32\.0 MiB, over the 32\.0 MiB that resources\/read sends; read it where/,
      ),
    });
  });
});

describe('a remote client reads saved files through the built server', () => {
  it.each(HTTP_KINDS)('over %s, from a server in another working directory', async (kind) => {
    const serverDir = tempDir('gtm-res-remote-');
    const server = await startHttpCli({ ...reference.env, CWD: serverDir });
    let client: Client | undefined;
    try {
      client = await connectHttp(server.url, kind);
      const { link, path } = await speak(client);
      // The path names the server's disk; the client only has the URI, and reads through it.
      expect(path.startsWith(serverDir)).toBe(true);
      expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([link.uri]);
      expect((await client.readResource({ uri: link.uri })).contents).toEqual([
        { uri: link.uri, mimeType: 'audio/mpeg', blob: expectedAudio() },
      ]);
      await expect(client.readResource({ uri: 'file:///etc/passwd' })).rejects.toMatchObject({
        code: -32602,
      });
      await disconnect(client);
    } finally {
      await server.stop();
    }
  });

  it('over stdio', async () => {
    const spawned = await connectStdio({ ...reference.env, CWD: tempDir('gtm-res-stdio-') });
    try {
      const { link } = await speak(spawned.client);
      expect((await spawned.client.readResource({ uri: link.uri })).contents).toEqual([
        { uri: link.uri, mimeType: 'audio/mpeg', blob: expectedAudio() },
      ]);
    } finally {
      await spawned.close();
    }
  });
});
