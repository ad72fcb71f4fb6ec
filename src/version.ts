import { readFileSync } from 'node:fs';

declare const __GATEWAY_TOOLS_VERSION__: string | undefined;

/** The package version: set by the bundler in dist/, read from package.json when run from src/. */
export const VERSION: string = (() => {
  if (typeof __GATEWAY_TOOLS_VERSION__ === 'string') return __GATEWAY_TOOLS_VERSION__;
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

export const SERVER_NAME = 'gateway-tools-mcp';
