import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseCommandLine } from '../../src/config/config.js';
import { helpText } from '../../src/config/help.js';
import { SETTINGS } from '../../src/config/settings.js';
import { userDataDir } from '../../src/config/user-dirs.js';

const parse = (argv: string[], env: Record<string, string> = {}) =>
  parseCommandLine(argv, env, '/work/project');

describe('configuration', () => {
  it('has sensible defaults', () => {
    const { command, config } = parse([]);
    expect(command).toBe('serve');
    expect(config.baseUrl).toBe('http://127.0.0.1:20128');
    expect(config.transport).toBe('stdio');
    expect(config.videoModel).toBe('xai/grok-imagine-video');
    expect(config.outputDir).toBe('/work/project/gateway-output');
    expect(config.inputRoots).toEqual(['/work/project']);
    expect(config.disabledTools).toEqual([]);
    expect(config.tools).toBeUndefined();
    expect(config.apiKey).toBeUndefined();
  });

  it('reads every setting from env and lets flags win', () => {
    const { config } = parse(['--timeout-ms', '5000', '--tools=video,audio'], {
      GATEWAY_BASE_URL: 'https://gw.example.com/',
      GATEWAY_TIMEOUT_MS: '9000',
      GATEWAY_API_KEY: 'k-123456',
      GATEWAY_TOOL_PREFIX: 'gw_',
      GATEWAY_INPUT_ROOTS: 'a, /abs/b',
    });
    expect(config.baseUrl).toBe('https://gw.example.com');
    expect(config.timeoutMs).toBe(5000);
    expect(config.tools).toEqual(['video', 'audio']);
    expect(config.apiKey).toBe('k-123456');
    expect(config.toolPrefix).toBe('gw_');
    expect(config.inputRoots).toEqual(['/work/project/a', '/abs/b']);
  });

  it('takes neither / nor the home directory for the workspace', () => {
    for (const cwd of ['/', homedir()]) {
      const { config } = parseCommandLine([], { XDG_DATA_HOME: '/data/me' }, cwd);
      expect(config.cwdIsWorkspace).toBe(false);
      expect(config.inputRoots).toEqual([]);
      expect(config.inputRootsSet).toBe(false);
      expect(config.outputDir).toBe('/data/me/gateway-tools-mcp/gateway-output');
      expect(config.outputDirSetting).toBe('gateway-output');
    }
    const set = parseCommandLine([], { GATEWAY_INPUT_ROOTS: '/srv/in', GATEWAY_OUTPUT_DIR: '/srv/out' }, '/');
    expect(set.config).toMatchObject({ inputRoots: ['/srv/in'], inputRootsSet: true, outputDir: '/srv/out' });
  });

  it('finds the per-user data directory of each platform', () => {
    expect(userDataDir({}, '/home/me', 'linux')).toBe('/home/me/.local/share/gateway-tools-mcp');
    expect(userDataDir({ XDG_DATA_HOME: 'relative' }, '/home/me', 'linux')).toBe(
      '/home/me/.local/share/gateway-tools-mcp',
    );
    expect(userDataDir({}, '/Users/me', 'darwin')).toBe(
      '/Users/me/Library/Application Support/gateway-tools-mcp',
    );
    expect(userDataDir({ LOCALAPPDATA: 'C:/Users/me/AppData/Local' }, 'C:/Users/me', 'win32')).toBe(
      join('C:/Users/me/AppData/Local', 'gateway-tools-mcp'),
    );
  });

  it('documents every setting in the README', () => {
    const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');
    expect(
      SETTINGS.filter((s) => !readme.includes(s.env) || !readme.includes(s.flag)).map((s) => s.env),
    ).toEqual([]);
  });

  it('maps every setting to a GATEWAY_ variable and a -- flag', () => {
    for (const s of SETTINGS) {
      expect(s.env).toMatch(/^GATEWAY_[A-Z_]+$/);
      expect(s.flag).toMatch(/^--[a-z-]+$/);
      expect(helpText('1.0.0')).toContain(s.env);
    }
  });

  it('names the variable and the problem for an invalid value', () => {
    expect(() => parse([], { GATEWAY_TIMEOUT_MS: 'soon' })).toThrow(
      /^invalid GATEWAY_TIMEOUT_MS \(--timeout-ms\): must be a number \(got "soon"\)$/,
    );
    expect(() => parse(['--max-retries', '99'])).toThrow(
      /invalid --max-retries \(GATEWAY_MAX_RETRIES\): must be at most 10/,
    );
    expect(() => parse([], { GATEWAY_BASE_URL: 'ftp://x' })).toThrow(
      /GATEWAY_BASE_URL.*http:\/\/ or https:\/\//,
    );
    expect(() => parse([], { GATEWAY_LOG_LEVEL: 'loud' })).toThrow(
      /GATEWAY_LOG_LEVEL.*error, warn, info, debug/,
    );
    expect(() => parse(['--bogus'])).toThrow(ConfigError);
    expect(() => parse(['--port'])).toThrow(/--port needs a value/);
  });

  it('never prints the credentials of an invalid base URL', () => {
    for (const value of [
      'ftp://admin:hunter2-secret-pass@gw.example.com',
      'http://admin:hunter2-secret-pass@bad host:99',
      'http://hunter2-secret-pass@gw.example.com:99999',
      `ftp://admin:${'x'.repeat(70)}hunter2-secret-pass@gw.example.com`,
    ]) {
      let message = '';
      try {
        parse([], { GATEWAY_BASE_URL: value });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message, value).toMatch(/^invalid GATEWAY_BASE_URL .*\(got ".*\/\/\*\*\*@/);
      expect(message, value).not.toMatch(/hunter2|secret|admin|x{10}/);
    }
  });

  it('never shows a secret value in an error', () => {
    try {
      parse([], { GATEWAY_MCP_TOKEN: 'short' });
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toContain('GATEWAY_MCP_TOKEN');
      expect((error as Error).message).not.toContain('short"');
    }
  });

  it('reads the key from GATEWAY_API_KEY_FILE, and explains an unreadable one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gtm-key-'));
    const file = join(dir, 'key');
    writeFileSync(file, 'sk-from-file-123\n');
    expect(parse([], { GATEWAY_API_KEY_FILE: file }).config.apiKey).toBe('sk-from-file-123');
    expect(parse([], { GATEWAY_API_KEY_FILE: file, GATEWAY_API_KEY: 'direct' }).config.apiKey).toBe('direct');
    expect(() => parse([], { GATEWAY_API_KEY_FILE: join(dir, 'missing') })).toThrow(
      /GATEWAY_API_KEY_FILE: cannot read .* \(ENOENT\)/,
    );
    writeFileSync(file, '  \n');
    expect(() => parse([], { GATEWAY_API_KEY_FILE: file })).toThrow(/is empty/);
  });

  it('recognises commands', () => {
    expect(parse(['--help']).command).toBe('help');
    expect(parse(['--version']).command).toBe('version');
    expect(parse(['doctor', '--json'])).toMatchObject({ command: 'doctor', json: true });
    expect(() => parse(['serve-now'])).toThrow(/unexpected argument/);
  });
});
