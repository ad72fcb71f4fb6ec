import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  type CallToolResult,
  ListRootsRequestSchema,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { useReferenceService } from '../../harness/gateway.js';
import {
  connectInMemory,
  connectStdio,
  runCli,
  structuredOf,
  tempDir,
  textOf,
} from '../../harness/harness.js';
import { connectHttp, disconnect, HTTP_KINDS, startHttpCli } from '../../harness/http-harness.js';
import { synthesizeAudio } from '../../reference-service/index.js';

// The workspace follows the client's roots: they are the input roots, relative paths resolve in
// the first, and files are saved under it. Without roots, a server started in / or the home
// directory (as Claude Desktop starts it) reads no local file and saves in the per-user data
// directory.
const reference = useReferenceService();

interface RootsClient {
  client: Client;
  /** The directories the client offers as roots; change them and call client.sendRootsListChanged(). */
  roots: string[];
  /** How often the server asked for them. */
  asked(): number;
  log: LoggingMessageNotification['params'][];
}

function rootsClient(roots: string[], answer?: () => never): RootsClient {
  const client = new Client(
    { name: 'roots-client', version: '1' },
    { capabilities: { roots: { listChanged: true } } },
  );
  const state: RootsClient = { client, roots, asked: () => asked, log: [] };
  let asked = 0;
  client.setRequestHandler(ListRootsRequestSchema, () => {
    asked += 1;
    if (answer) answer();
    return { roots: state.roots.map((dir, i) => ({ uri: pathToFileURL(dir).href, name: `root ${i}` })) };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    state.log.push(n.params);
  });
  return state;
}

async function speak(client: Client): Promise<string> {
  const result = (await client.callTool({
    name: 'audio_speech',
    arguments: { text: 'where am I saved', model: 'openai/tts-1/alloy' },
  })) as CallToolResult;
  expect(result.isError, textOf(result)).toBeFalsy();
  return structuredOf<{ file_path: string }>(result).file_path;
}

function transcribe(client: Client, filePath: string): Promise<CallToolResult> {
  return client.callTool({
    name: 'audio_transcribe',
    arguments: { file_path: filePath, response_format: 'text' },
  }) as Promise<CallToolResult>;
}

/** A directory with an audio file in it. */
function dirWithAudio(prefix: string, words: string): string {
  const dir = tempDir(prefix);
  writeFileSync(join(dir, 'clip.mp3'), synthesizeAudio(words, 'mp3'));
  return dir;
}

/** What the reference service's transcript of that file says (it names the bytes it got). */
const heard = (words: string) => `Transcript of clip.mp3 (${synthesizeAudio(words, 'mp3').length} bytes)`;

describe('a client with roots, in memory', () => {
  it('makes its roots the input roots and saves under the first one, asking once until they change', async () => {
    const [rootA, rootB, rootC] = [
      dirWithAudio('gtm-root-a-', 'in a'),
      dirWithAudio('gtm-root-b-', 'in the second root'),
      tempDir('gtm-root-c-'),
    ];
    const serverCwd = dirWithAudio('gtm-cwd-', 'in the cwd');
    const roots = rootsClient([rootA, rootB]);
    const conn = await connectInMemory({ ...reference.env, CWD: serverCwd }, [], roots.client);
    try {
      const first = await speak(conn.client);
      expect(dirname(first)).toBe(join(rootA, 'gateway-output'));
      expect(textOf(await transcribe(conn.client, 'clip.mp3'))).toContain(heard('in a'));
      expect(textOf(await transcribe(conn.client, join(rootB, 'clip.mp3')))).toContain(
        heard('in the second root'),
      );
      const refused = await transcribe(conn.client, join(serverCwd, 'clip.mp3'));
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(`is outside the allowed input roots (${rootA}, ${rootB})`);
      expect(roots.asked()).toBe(1);
      expect(existsSync(join(serverCwd, 'gateway-output'))).toBe(false);

      roots.roots = [rootC];
      await roots.client.sendRootsListChanged();
      expect(dirname(await speak(conn.client))).toBe(join(rootC, 'gateway-output'));
      expect((await transcribe(conn.client, join(rootA, 'clip.mp3'))).isError).toBe(true);
      expect(roots.asked()).toBe(2);
      // A file saved before the change is still read where it was saved.
      const listed = (await conn.client.listResources()).resources.map((r) => r.name);
      expect(listed).toContain(first.slice(first.lastIndexOf('/') + 1));
      const uri = `gateway-tools://output/${first.slice(first.lastIndexOf('/') + 1)}`;
      expect((await conn.client.readResource({ uri })).contents).toHaveLength(1);
    } finally {
      await conn.close();
    }
  });

  it('keeps GATEWAY_INPUT_ROOTS as the input roots, and does not ask when roots would change nothing', async () => {
    const [root, configured] = [
      dirWithAudio('gtm-root-', 'in the root'),
      dirWithAudio('gtm-conf-', 'configured'),
    ];
    const roots = rootsClient([root]);
    const conn = await connectInMemory(
      { ...reference.env, GATEWAY_INPUT_ROOTS: configured },
      [],
      roots.client,
    );
    try {
      expect((await transcribe(conn.client, join(root, 'clip.mp3'))).isError).toBe(true);
      expect(textOf(await transcribe(conn.client, join(configured, 'clip.mp3')))).toContain(
        heard('configured'),
      );
      expect(dirname(await speak(conn.client))).toBe(join(root, 'gateway-output'));
    } finally {
      await conn.close();
    }
    const fixed = rootsClient([root]);
    const output = join(tempDir('gtm-out-'), 'out');
    const both = await connectInMemory(
      { ...reference.env, GATEWAY_INPUT_ROOTS: configured, GATEWAY_OUTPUT_DIR: output },
      [],
      fixed.client,
    );
    try {
      expect(dirname(await speak(both.client))).toBe(output);
      expect(fixed.asked()).toBe(0);
    } finally {
      await both.close();
    }
  });

  it('falls back to the settings, and says so, when the client fails to list its roots', async () => {
    const cwd = tempDir('gtm-cwd-');
    const roots = rootsClient([tempDir('gtm-root-')], () => {
      throw new Error('roots are not available');
    });
    const conn = await connectInMemory({ ...reference.env, CWD: cwd }, [], roots.client);
    try {
      expect(dirname(await speak(conn.client))).toBe(join(cwd, 'gateway-output'));
      expect(roots.log).toEqual([
        expect.objectContaining({
          level: 'warning',
          data: expect.stringMatching(
            /^the client did not list its roots \(.*roots are not available.*\); using input roots /,
          ),
        }),
      ]);
    } finally {
      await conn.close();
    }
  });
});

describe('the built server', () => {
  it('uses the roots of a stdio client started in /', async () => {
    const root = dirWithAudio('gtm-root-', 'from the root');
    const roots = rootsClient([root]);
    const spawned = await connectStdio(
      { ...reference.env, CWD: '/', HOME: tempDir('gtm-home-') },
      [],
      roots.client,
    );
    try {
      expect(dirname(await speak(roots.client))).toBe(join(root, 'gateway-output'));
      expect(textOf(await transcribe(roots.client, 'clip.mp3'))).toContain(heard('from the root'));
    } finally {
      await spawned.close();
    }
  });

  it.each(['/', 'home'])(
    'without roots in %s: reads no local file and saves in the per-user data directory',
    async (where) => {
      const home = tempDir('gtm-home-');
      writeFileSync(join(home, 'clip.mp3'), synthesizeAudio('private', 'mp3'));
      const cwd = where === '/' ? '/' : home;
      const spawned = await connectStdio({ ...reference.env, CWD: cwd, HOME: home });
      try {
        const before = reference.service.counters.transcriptions ?? 0;
        const refused = await transcribe(spawned.client, join(home, 'clip.mp3'));
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toBe(
          `Local files cannot be read here: the server runs in ${cwd}, which is not a project directory, and the client shares no workspace roots. ` +
            "Set GATEWAY_INPUT_ROOTS (in this server's settings in the client) to the directories tools may read, or give the file as a URL or inline data instead.",
        );
        expect(reference.service.counters.transcriptions ?? 0).toBe(before);
        const saved = await speak(spawned.client);
        expect(dirname(saved)).toBe(join(home, '.local/share/gateway-tools-mcp/gateway-output'));
        expect(spawned.stderr()).toContain(`the working directory ${cwd} is not a project directory`);
        if (where === 'home') expect(readdirSync(home).sort()).toEqual(['.local', 'clip.mp3']);
      } finally {
        await spawned.close();
      }
    },
  );

  it('doctor names the per-user output directory and says there are no input roots', async () => {
    const home = tempDir('gtm-home-');
    const run = await runCli(['doctor', '--json'], { ...reference.env, CWD: '/', HOME: home });
    const report = JSON.parse(run.stdout) as { checks: { id: string; status: string; message: string }[] };
    const byId = (id: string) => report.checks.find((c) => c.id === id);
    expect(byId('output_dir')).toMatchObject({
      status: 'ok',
      message: `Output directory (per-user default: / is not a project directory) ${join(home, '.local/share/gateway-tools-mcp/gateway-output')} does not exist yet; it will be created on the first save (${home} is writable)`,
    });
    expect(byId('input_root')).toMatchObject({
      status: 'warn',
      message: expect.stringMatching(/^No input roots: \/ is not a project directory/),
    });
    expect(byId('workspace')?.message).toContain(
      'their roots are the input roots, files go to <first root>/gateway-output',
    );

    const inProject = await runCli(['doctor', '--json'], {
      ...reference.env,
      CWD: tempDir('gtm-proj-'),
      HOME: home,
    });
    const checks = (JSON.parse(inProject.stdout) as typeof report).checks;
    expect(checks.find((c) => c.id === 'output_dir_default')?.message).toContain(
      join(home, '.local/share/gateway-tools-mcp/gateway-output'),
    );
  });

  it.each(HTTP_KINDS)('follows the roots of a client over %s', async (kind) => {
    const root = tempDir('gtm-root-');
    const server = await startHttpCli({ ...reference.env, CWD: tempDir('gtm-cwd-') });
    const roots = rootsClient([root]);
    try {
      await connectHttp(server.url, kind, { client: roots.client });
      expect(dirname(await speak(roots.client))).toBe(join(root, 'gateway-output'));
      expect(roots.asked()).toBe(1);
      await disconnect(roots.client);
    } finally {
      await server.stop();
    }
  });

  it('does not ask for roots in stateless mode, where the answer would reach another server', async () => {
    const cwd = tempDir('gtm-cwd-');
    const server = await startHttpCli({ ...reference.env, CWD: cwd }, ['--stateless']);
    const roots = rootsClient([tempDir('gtm-root-')]);
    try {
      await connectHttp(server.url, 'streamable', { client: roots.client });
      expect(dirname(await speak(roots.client))).toBe(join(cwd, 'gateway-output'));
      expect(roots.asked()).toBe(0);
      await disconnect(roots.client);
    } finally {
      await server.stop();
    }
  });
});
