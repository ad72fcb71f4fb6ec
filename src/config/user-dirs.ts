import { homedir } from 'node:os';
import { join, parse as parsePath, resolve } from 'node:path';

/**
 * Whether a working directory can stand for the user's workspace. Claude Desktop starts stdio
 * servers in `/`, and a server started from a shell profile or a service manager may run in the
 * home directory: taking either as the workspace would make every file of the user an allowed
 * input, and `/` is not writable for the output directory.
 */
export function isWorkspaceDir(dir: string, home: string = homedir()): boolean {
  const full = resolve(dir);
  return full !== parsePath(full).root && full !== resolve(home);
}

/**
 * Where files go when there is no workspace: the per-user data directory of the platform
 * (XDG_DATA_HOME or ~/.local/share on Linux, ~/Library/Application Support on macOS,
 * %LOCALAPPDATA% on Windows), in a folder of this server's own.
 */
export function userDataDir(
  env: NodeJS.ProcessEnv,
  home: string = homedir(),
  platform: NodeJS.Platform = process.platform,
): string {
  const base =
    platform === 'win32'
      ? (env.LOCALAPPDATA ?? join(home, 'AppData', 'Local'))
      : platform === 'darwin'
        ? join(home, 'Library', 'Application Support')
        : env.XDG_DATA_HOME?.startsWith('/')
          ? env.XDG_DATA_HOME
          : join(home, '.local', 'share');
  return join(base, 'gateway-tools-mcp');
}
