// Bundles src/cli.ts into one file, dist/cli.js: start-up parses one module instead of hundreds.
// undici stays external and is imported on the first service request, so a server that is only
// started and listed never loads it.
import { chmod, rm } from 'node:fs/promises';
import { build } from 'esbuild';

await rm('dist', { recursive: true, force: true });
await build({
  entryPoints: ['src/cli.ts'],
  outfile: 'dist/cli.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['undici'],
  legalComments: 'none',
  logLevel: 'warning',
  // Bundled CommonJS dependencies (ajv) call require(); give them one in this ES module.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
  },
});
await chmod('dist/cli.js', 0o755);
