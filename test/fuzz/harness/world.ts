import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Connected, connectInMemory, structuredOf, tempDir } from '../../harness/harness.js';
import { startThirdPartyHost, type ThirdPartyHost } from '../../harness/third-party-host.js';
import {
  type ReferenceService,
  startReferenceService,
  synthesizeAudio,
} from '../../reference-service/index.js';
import { type FsSnapshot, snapshotTree } from './fs-snapshot.js';

/**
 * The fuzz suite's world: dedicated input roots and output directory, sentinel files just outside
 * them (distinctive content that must never reach the service or a result), symlinks, a FIFO and
 * device links pointing out, the reference service, a third-party web host, and a server
 * connected in memory. The process's cwd and `TMPDIR` point into the world too.
 */
export interface Sentinel {
  path: string;
  sha256: string;
  base64: string;
}

export interface World {
  base: string;
  inRoot: string;
  inRoot2: string;
  outDir: string;
  outside: string;
  tmp: string;
  token: string;
  sentinels: Sentinel[];
  service: ReferenceService;
  host: ThirdPartyHost;
  conn: Connected;
  /** Real handles: a finished job, a failed one and one that never finishes. */
  jobs: { done: string; failed: string; running: string };
  /** Everything the server logged at error level (a tool that threw logs "<tool> threw"). */
  loggedErrors: string[];
  /** The tree outside the output dir as it was before the first call. */
  baseline: FsSnapshot;
  restore(): void;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const ID3 = Buffer.from('ID3\u0004\u0000\u0000\u0000\u0000\u0000\u0000', 'latin1');

export async function createWorld(): Promise<World> {
  const base = tempDir('gtm-fuzz-');
  const inRoot = join(base, 'roots', 'in');
  const inRoot2 = join(base, 'roots', 'in2');
  const outDir = join(base, 'out');
  const outside = join(base, 'outside');
  const tmp = join(base, 'tmp');
  for (const dir of [join(inRoot, 'dir'), inRoot2, outDir, join(outside, 'sub'), tmp]) {
    mkdirSync(dir, { recursive: true });
  }
  const token = `GTM-SENTINEL-${randomBytes(12).toString('hex')}`;
  const sentinels = plantSentinels(base, outside, token);
  plantInputs(inRoot, inRoot2, outside);

  // The process's own working directory and temp dir move into the world too, so anything
  // written relative to either shows up in the snapshot (vitest runs this file in its own process).
  const previousCwd = process.cwd();
  const processCwd = join(base, 'process-cwd');
  mkdirSync(processCwd);
  process.chdir(processCwd);
  // The ledger of billed calls lives outside the world (made before TMPDIR moves into it): its
  // day files are the server's own bookkeeping, not files a tool call leaves behind.
  const ledgerDir = tempDir('gtm-ledger-');
  const previousTmp = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  const service = await startReferenceService();
  const host = await startThirdPartyHost();
  const conn = await connectInMemory({
    GATEWAY_BASE_URL: service.url,
    GATEWAY_API_KEY: service.apiKey,
    GATEWAY_INPUT_ROOTS: `${inRoot},${inRoot2}`,
    GATEWAY_OUTPUT_DIR: outDir,
    GATEWAY_MAX_UPLOAD_MB: '1',
    // Every fuzzed URL points at loopback; a refused connection must not be retried for seconds.
    GATEWAY_MAX_RETRIES: '0',
    GATEWAY_TIMEOUT_MS: '5000',
    CWD: inRoot,
    GATEWAY_LEDGER_DIR: ledgerDir,
  });
  const loggedErrors: string[] = [];
  const log = conn.runtime.log;
  log.error = (message: string) => {
    loggedErrors.push(message);
  };
  // The client validates structuredContent against each tool's output schema once it has the list.
  await conn.client.listTools();
  const jobs = await startJobs(conn, service);
  return {
    base,
    inRoot,
    inRoot2,
    outDir,
    outside,
    tmp,
    token,
    sentinels,
    service,
    host,
    conn,
    jobs,
    loggedErrors,
    baseline: snapshotTree(base, [outDir, tmp]),
    restore() {
      process.chdir(previousCwd);
      if (previousTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previousTmp;
    },
  };
}

export async function closeWorld(world: World): Promise<void> {
  await world.conn.close();
  await world.service.close();
  await world.host.close();
  world.restore();
  // A run saves about a thousand small files: leave nothing behind in the system's temp dir.
  rmSync(world.base, { recursive: true, force: true });
}

/** Files with distinctive content outside the roots; some look like audio or images on purpose. */
function plantSentinels(base: string, outside: string, token: string): Sentinel[] {
  const marked = Buffer.from(`${token}\n`.repeat(8));
  const files: [string, Buffer][] = [
    [join(outside, 'secret.txt'), marked],
    [join(outside, 'secret.mp3'), Buffer.concat([ID3, Buffer.alloc(64), marked])],
    [join(outside, 'secret.png'), Buffer.concat([PNG_SIGNATURE, marked])],
    [join(outside, 'sub', 'deep.wav'), Buffer.concat([Buffer.from('RIFF\0\0\0\0WAVE'), marked])],
    // A sibling whose name starts like the root's: "/x/in-evil" is not inside "/x/in".
    [join(base, 'roots', 'in-evil', 'secret.mp3'), Buffer.concat([ID3, Buffer.alloc(32), marked])],
  ];
  return files.map(([path, bytes]) => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, bytes);
    return {
      path,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      base64: bytes.toString('base64'),
    };
  });
}

/** Legitimate inputs, and every kind of path trick a root can hold. */
function plantInputs(inRoot: string, inRoot2: string, outside: string): void {
  writeFileSync(join(inRoot, 'audio.mp3'), synthesizeAudio('fuzz audio', 'mp3'));
  writeFileSync(join(inRoot, 'emoji 🎵.mp3'), synthesizeAudio('emoji', 'mp3'));
  writeFileSync(join(inRoot, 'dir', 'nested.wav'), synthesizeAudio('nested', 'wav'));
  writeFileSync(join(inRoot, 'image.png'), Buffer.concat([PNG_SIGNATURE, Buffer.from('tiny image body')]));
  writeFileSync(join(inRoot, 'notes.txt'), 'plain text notes, not audio\n');
  writeFileSync(join(inRoot, 'empty.mp3'), '');
  writeFileSync(join(inRoot2, 'other.mp3'), synthesizeAudio('second root', 'mp3'));
  // Sparse files over the limits (1 MiB uploads, 10 MiB images): refused by size, never read.
  writeFileSync(join(inRoot, 'big.mp3'), ID3);
  truncateSync(join(inRoot, 'big.mp3'), 3 * 1024 * 1024);
  writeFileSync(join(inRoot, 'big.png'), PNG_SIGNATURE);
  truncateSync(join(inRoot, 'big.png'), 11 * 1024 * 1024);
  const links: [string, string][] = [
    ['link-in.mp3', 'audio.mp3'],
    ['link-out.mp3', join(outside, 'secret.mp3')],
    ['link-out-relative.png', '../../outside/secret.png'],
    ['link-out-dir', outside],
    ['link-evil.mp3', '../in-evil/secret.mp3'],
    ['link-root', '/'],
    ['link-zero', '/dev/zero'],
    ['link-environ', '/proc/self/environ'],
    ['loop', 'loop'],
    ['dangling.mp3', 'does-not-exist.mp3'],
  ];
  for (const [name, target] of links) symlinkSync(target, join(inRoot, name));
  try {
    execFileSync('mkfifo', [join(inRoot, 'fifo.mp3')]);
  } catch {
    // No mkfifo on this machine: the FIFO case is skipped, everything else still runs.
  }
}

/** Three real jobs, so handles that pass validation reach the service and get real answers. */
async function startJobs(conn: Connected, service: ReferenceService): Promise<World['jobs']> {
  const submit = async () => {
    const result = (await conn.client.callTool({
      name: 'video_generate',
      arguments: { prompt: 'fuzz job', wait_seconds: 0 },
    })) as CallToolResult;
    return structuredOf<{ job_id: string }>(result).job_id;
  };
  service.setVideoTiming({ pollsUntilDone: 1_000_000_000 });
  const running = await submit();
  service.setVideoTiming({ pollsUntilDone: 1, failWith: { code: 'moderation', message: 'refused' } });
  const failed = await submit();
  // Small videos: fuzzed downloads write many of them.
  service.setVideoTiming({ pollsUntilDone: 1, failWith: undefined, videoBytes: 2048 });
  const done = await submit();
  return { done, failed, running };
}
