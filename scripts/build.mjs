// Bundles src/cli.ts into dist/cli.js (plus chunks for what start-up does not need): start-up
// parses one minified module instead of hundreds, without the dependency code it never runs
// (scripts/bundle-stubs.mjs).
// undici stays external and is imported on the first service request, so a server that is only
// started and listed never loads it. pg stays external too: it is imported only when the ledger is
// kept in PostgreSQL (GATEWAY_LEDGER_URL), from node_modules, where it is installed as a dependency.
import { execFileSync } from 'node:child_process';
import { chmod, readFile, rm } from 'node:fs/promises';
import { build } from 'esbuild';
import { buildViewsWithInputs } from './build-views.mjs';
import { bundleStubs } from './bundle-stubs.mjs';
import { writeThirdPartyNotices } from './third-party-notices.mjs';

const { version } = JSON.parse(await readFile('package.json', 'utf8'));
// Tool schemas converted from zod now rather than at every start-up (see src/mcp/tool-listing.ts).
const toolSchemas = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/tool-schemas.ts'], {
  encoding: 'utf8',
});
// The views' HTML (MCP Apps), embedded in the chunk that serves them: read on the first view read.
// A string, parsed where it is read: esbuild inlines a string where it is used, where it would
// move an object into a chunk shared with start-up.
const views = await buildViewsWithInputs();
await rm('dist', { recursive: true, force: true });
const { metafile } = await build({
  entryPoints: ['src/cli.ts'],
  outdir: 'dist',
  // Code behind dynamic imports (doctor, the HTTP transport) goes into chunks loaded on demand.
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  external: ['undici', 'pg'],
  legalComments: 'none',
  // Less source text to read and compile at every start-up.
  minify: true,
  plugins: [bundleStubs()],
  define: {
    __GATEWAY_TOOLS_VERSION__: JSON.stringify(version),
    __GATEWAY_TOOL_SCHEMAS__: toolSchemas,
    __GATEWAY_VIEWS__: JSON.stringify(JSON.stringify(views.pages)),
  },
  logLevel: 'warning',
  metafile: true,
  // Bundled CommonJS dependencies (content-type) call require(); give them one in this ES module.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
  },
});
await chmod('dist/cli.js', 0o755);
// The view pages too: a package a view's script bundles would need its notice (today they bundle none).
await writeThirdPartyNotices(
  { outputs: { ...metafile.outputs, ...views.metafile.outputs } },
  'dist/THIRD-PARTY-NOTICES.md',
);
