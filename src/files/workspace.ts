import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/config.js';
import type { Logger } from '../lib/log.js';

/** Where one client's files are: what tools read from and save to. */
export interface Workspace {
  /** Directories local files may be read from (none when there is no workspace). */
  inputRoots: readonly string[];
  /** Where a relative path given to a tool is resolved. */
  baseDir: string;
  outputDir: string;
  /** A project directory the output directory may not leave through a symlink (fs-guards.ts). */
  workDir: string | undefined;
}

/** How long a client may take to list its roots before the settings are used instead. */
const ROOTS_TIMEOUT_MS = 5_000;

/** The client's side of roots, as the MCP connection gives it. */
export interface RootsClient {
  /** Whether the client offers roots and its answer can come back to this server. */
  offersRoots(): boolean;
}

/** Asks the client for its roots (within `timeoutMs`), on the stream of the call that needs them. */
export type AskRoots = (timeoutMs: number) => Promise<readonly { uri: string }[]>;

/**
 * The workspace of one connection. A client that offers roots (Claude Code, Cursor, VS Code,
 * Gemini CLI) says where the user's workspace is: its roots are the input roots (unless
 * GATEWAY_INPUT_ROOTS is set), a relative output directory goes under the first one, and relative
 * paths resolve there. They are asked for on the first call that needs them, on that call's own
 * stream (over Streamable HTTP the only one sure to be open), and asked again after
 * notifications/roots/list_changed. Without roots (or when asking fails) the settings apply.
 */
export class ClientWorkspace {
  private roots: Promise<string[] | null> | undefined;

  constructor(
    private readonly client: RootsClient,
    private readonly config: Config,
  ) {}

  /**
   * Forgets the client's roots, asked again on the next call that needs them: after
   * notifications/roots/list_changed, and after a new initialize (which may bring other
   * capabilities).
   */
  reset(): void {
    this.roots = undefined;
  }

  async current(ask: AskRoots, log: Logger): Promise<Workspace> {
    if (!this.wantsRoots()) return fromSettings(this.config);
    if (!this.roots) this.roots = this.askRoots(ask, log);
    const roots = await this.roots;
    return roots && roots.length > 0 ? fromRoots(this.config, roots) : fromSettings(this.config);
  }

  private wantsRoots(): boolean {
    if (!this.client.offersRoots()) return false;
    return rootsChangeAnything(this.config);
  }

  private async askRoots(ask: AskRoots, log: Logger): Promise<string[] | null> {
    try {
      const roots = await ask(ROOTS_TIMEOUT_MS);
      const dirs = roots.flatMap((root) => localPath(root.uri));
      log.info(
        dirs.length > 0
          ? `workspace from the client's roots: ${dirs.join(', ')}`
          : `the client listed no local roots; using ${this.fallback()}`,
      );
      return dirs;
    } catch (error) {
      log.warn(
        `the client did not list its roots (${error instanceof Error ? error.message : String(error)}); using ${this.fallback()}`,
      );
      return null;
    }
  }

  private fallback(): string {
    const { inputRoots, outputDir } = this.config;
    return `input roots ${inputRoots.length > 0 ? inputRoots.join(', ') : 'none'}, output directory ${outputDir}`;
  }
}

/** Whether a client's roots would change anything: not when the input roots and an absolute output directory are both set. */
export function rootsChangeAnything(config: Pick<Config, 'inputRootsSet' | 'outputDirSetting'>): boolean {
  return !(config.inputRootsSet && isAbsolute(config.outputDirSetting));
}

/** The workspace a client's roots (URIs) give: the settings when none is a local folder. */
export function workspaceOfRoots(config: Config, uris: readonly string[]): Workspace {
  const dirs = uris.flatMap(localPath);
  return dirs.length > 0 ? fromRoots(config, dirs) : fromSettings(config);
}

export function fromSettings(config: Config): Workspace {
  return {
    inputRoots: config.inputRoots,
    baseDir: config.cwd,
    outputDir: config.outputDir,
    workDir: config.cwdIsWorkspace ? config.cwd : undefined,
  };
}

function fromRoots(config: Config, roots: readonly string[]): Workspace {
  const first = roots[0] as string;
  return {
    inputRoots: config.inputRootsSet ? config.inputRoots : roots,
    baseDir: first,
    outputDir: isAbsolute(config.outputDirSetting)
      ? config.outputDirSetting
      : resolve(first, config.outputDirSetting),
    workDir: first,
  };
}

/** A root's directory when it is a local file: URI; roots are file: URIs, others are skipped. */
function localPath(uri: string): string[] {
  try {
    const path = fileURLToPath(uri);
    return isAbsolute(path) ? [resolve(path)] : [];
  } catch {
    return [];
  }
}
