// File checks for `doctor`. The output directory is not created here (the tools create it on
// first save): a missing one is checked through its nearest existing parent, and every probe
// file is removed again, so doctor leaves nothing behind. Only the lines that apply to this
// configuration are made: none when no enabled tool reads or saves files, and none about client
// roots where they are never asked for or would change nothing.

import { randomBytes } from 'node:crypto';
import { rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { Config } from '../config/config.js';
import type { ToolGroup } from '../config/tool-groups.js';
import { userDataDir } from '../config/user-dirs.js';
import { rootsChangeAnything } from '../files/workspace.js';
import { selectTools } from '../mcp/tool-selection.js';
import { type Check, fail, ok, warn } from './check.js';

/** The groups whose tools read local files or save files: speech, transcription, video. */
const FILE_GROUPS: ReadonlySet<ToolGroup> = new Set(['audio', 'video']);

/** Whether an enabled tool reads local files or saves files (web tools and models do neither). */
export function usesFiles(config: Config): boolean {
  return selectTools(config).some((tool) => FILE_GROUPS.has(tool.group));
}

/** Stateless HTTP builds a server per request: a client's roots could never come back to it. */
function clientRootsAsked(config: Config): boolean {
  return !(config.transport === 'http' && config.stateless);
}

/** What a folder check says besides where: the fix, and when a missing folder is made. */
export interface FolderWords {
  fix: string;
  madeOn: string;
}

const OUTPUT_FOLDER: FolderWords = {
  fix: 'Set GATEWAY_OUTPUT_DIR to a directory you can write to, or fix its permissions.',
  madeOn: 'the first save',
};

/** Whether a folder can be written, or made where it is missing; nothing is left behind. */
export async function checkOutputDir(
  dir: string,
  label = 'Output directory',
  id = 'output_dir',
  required = true,
  words: FolderWords = OUTPUT_FOLDER,
): Promise<Check> {
  const { fix } = words;
  const existing = await nearestExisting(dir);
  if (!existing.isDirectory) {
    return fail(id, required, `${label} ${dir} cannot be created: ${existing.path} is not a directory`, fix);
  }
  const problem = await probeWrite(existing.path);
  if (problem)
    return fail(id, required, `${label} ${dir} is not writable (${existing.path}: ${problem})`, fix);
  const message =
    existing.path === dir
      ? `${label} writable: ${dir}`
      : `${label} ${dir} does not exist yet; it will be created on ${words.madeOn} (${existing.path} is writable)`;
  return ok(id, required, message);
}

/**
 * Where files go in each case: here (the output directory for this working directory), without a
 * workspace (a server started in / or the home directory, as Claude Desktop starts it, whose
 * client shares no roots), and for a client that shares its workspace roots when they are asked
 * for and change anything.
 */
export async function checkWorkspace(config: Config): Promise<Check[]> {
  const here = await checkOutputDir(
    config.outputDir,
    config.cwdIsWorkspace
      ? 'Output directory'
      : `Output directory (per-user default: ${config.cwd} is not a project directory)`,
  );
  const checks = [here];
  const relative = !isAbsolute(config.outputDirSetting);
  if (relative && config.cwdIsWorkspace) {
    checks.push(
      await checkOutputDir(
        resolve(userDataDir(process.env), config.outputDirSetting),
        'Output directory without a workspace (started in / or the home directory, as Claude Desktop does, and no client roots)',
        'output_dir_default',
        false,
      ),
    );
  }
  if (!clientRootsAsked(config) || !rootsChangeAnything(config)) return checks;
  const roots = config.inputRootsSet
    ? 'GATEWAY_INPUT_ROOTS stays the input roots'
    : 'their roots are the input roots';
  const output = relative
    ? `files go to <first root>/${config.outputDirSetting}`
    : `files go to ${config.outputDir}`;
  const clients = 'Clients that share workspace roots (Claude Code, Cursor, VS Code, Gemini CLI)';
  checks.push(ok('workspace', false, `${clients}: ${roots}, ${output}`));
  return checks;
}

export async function checkInputRoots(config: Config): Promise<Check[]> {
  const { inputRoots: roots, cwd } = config;
  if (roots.length === 0) {
    const so = clientRootsAsked(config)
      ? "local files are read only from the client's roots, when it shares them"
      : 'a stateless HTTP server, which cannot ask clients for their roots, reads no local files';
    return [
      warn(
        'input_root',
        false,
        `No input roots: ${cwd} is not a project directory, so ${so}`,
        'Set GATEWAY_INPUT_ROOTS to the directories tools may read (comma-separated).',
      ),
    ];
  }
  return Promise.all(
    roots.map(async (root): Promise<Check> => {
      const info = await stat(root).catch(() => null);
      if (info?.isDirectory()) return ok('input_root', false, `Input root: ${root}`);
      const message = `Input root ${root} ${info ? 'is not a directory' : 'does not exist'}: local files cannot be read from it`;
      return warn('input_root', false, message, 'Fix GATEWAY_INPUT_ROOTS (comma-separated directories).');
    }),
  );
}

async function nearestExisting(path: string): Promise<{ path: string; isDirectory: boolean }> {
  let current = path;
  for (;;) {
    const info = await stat(current).catch(() => null);
    if (info) return { path: current, isDirectory: info.isDirectory() };
    const parent = dirname(current);
    if (parent === current) return { path: current, isDirectory: false };
    current = parent;
  }
}

/** Writes and removes a probe file: access() can say yes on read-only mounts and ACLs. */
async function probeWrite(dir: string): Promise<string | null> {
  const probe = join(dir, `.gateway-tools-doctor-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(probe, '', { flag: 'wx' });
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
  }
}
