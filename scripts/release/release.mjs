// `npm run release`: builds the release artifacts from dist/ (npm run build first) into release/
// (or --out <dir>):
//   gateway-tools-mcp-<version>.tgz   the npm package, exactly as `npm publish` would upload it
//   gateway-tools-mcp-<version>.mcpb  the MCP Bundle: that package with its dependencies and a
//                                     manifest, validated and packed by the official mcpb CLI
//   server.json                       the MCP Registry entry, checked against package.json and
//                                     the registry's schema
//   SHA256SUMS                        the checksums of the three
// Nothing is downloaded: undici is copied from node_modules (the version package-lock.json pins).
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mcpbManifest } from './mcpb-manifest.mjs';
import { differences, SERVER_JSON, schemaErrors } from './server-json.mjs';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
const outArg = process.argv.indexOf('--out');
const OUT = resolve(outArg === -1 ? join(ROOT, 'release') : process.argv[outArg + 1]);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const base = `${pkg.name}-${pkg.version}`;

function fail(message) {
  console.error(`release: ${message}`);
  process.exit(1);
}

if (!existsSync(join(ROOT, 'dist/cli.js'))) fail('dist/cli.js is missing: run npm run build first');
const drift = differences();
if (drift.length > 0) {
  fail(
    `server.json is out of step with package.json (${drift.map(([p, want, got]) => `${p}: ${got}, want ${want}`).join('; ')}); run node scripts/release/server-json.mjs --write`,
  );
}
const invalid = schemaErrors();
if (invalid.length > 0) fail(`server.json does not match the registry schema: ${invalid.join('; ')}`);

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });

// 1. The npm package.
const packed = JSON.parse(
  // dist/ is built already (npm run release builds first): prepack need not build it again.
  execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', OUT], {
    cwd: ROOT,
    encoding: 'utf8',
  }),
)[0];
const tarball = join(OUT, packed.filename);

// 2. The bundle: the package as npm would install it, plus the manifest.
const staging = join(OUT, 'mcpb');
mkdirSync(staging);
execFileSync('tar', ['-xzf', tarball, '-C', staging, '--strip-components=1']);
// Every production dependency, and theirs (pg has some), as the project's install holds them.
const production = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((path) => path.includes('node_modules'));
for (const from of production) {
  cpSync(from, join(staging, from.slice(ROOT.length + 1)), { recursive: true });
}
const manifest = mcpbManifest(pkg, await listTools());
writeFileSync(join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
const mcpb = mcpbCli();
execFileSync(process.execPath, [mcpb, 'validate', join(staging, 'manifest.json')], { stdio: 'inherit' });
const bundle = join(OUT, `${base}.mcpb`);
execFileSync(process.execPath, [mcpb, 'pack', staging, bundle], { stdio: ['ignore', 'ignore', 'inherit'] });
rmSync(staging, { recursive: true });

// 3. The registry entry.
cpSync(SERVER_JSON, join(OUT, 'server.json'));

const artifacts = [tarball, bundle, join(OUT, 'server.json')];
const sums = artifacts.map((file) => `${sha256(file)}  ${file.slice(OUT.length + 1)}`);
writeFileSync(join(OUT, 'SHA256SUMS'), `${sums.join('\n')}\n`);
for (const file of artifacts) {
  console.log(`${file.slice(ROOT.length + 1)}  ${(statSync(file).size / 1024).toFixed(1)} KiB`);
}

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The path of the mcpb CLI (a devDependency), run with this Node.js on every platform. */
function mcpbCli() {
  const dir = join(ROOT, 'node_modules/@anthropic-ai/mcpb');
  if (!existsSync(dir)) fail('the mcpb CLI is missing: run npm ci');
  const { bin } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  return join(dir, typeof bin === 'string' ? bin : bin.mcpb);
}

/** The built server's tools/list, asked over stdio with no gateway (listing needs none). */
function listTools() {
  return new Promise((resolveTools, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/cli.js')], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { PATH: process.env.PATH, GATEWAY_LOG_LEVEL: 'error' },
    });
    let buffer = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error('the built server did not answer tools/list within 10 s'));
    }, 10_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
        const message = JSON.parse(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        if (message.id !== 2) continue;
        clearTimeout(timer);
        child.stdin.end();
        resolveTools(message.result.tools);
      }
    });
    child.on('error', reject);
    const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    send({
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'release', version: '1' },
      },
    });
    send({ method: 'notifications/initialized' });
    send({ id: 2, method: 'tools/list' });
  });
}
