// server.json, the MCP Registry's description of this server, kept in step with package.json:
// its name is package.json's `mcpName` (the registry checks that the published npm package carries
// the same one) and both of its versions are package.json's version.
//   node scripts/release/server-json.mjs          checks (exit 1 with the differences)
//   node scripts/release/server-json.mjs --write  updates server.json (run by `npm version`)
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');
export const SERVER_JSON = join(ROOT, 'server.json');
const SCHEMA = join(ROOT, 'scripts/release/schemas/server.schema.json');

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** What server.json must say for this package.json: [path, expected, actual] for each difference. */
export function differences(pkg = readJson(join(ROOT, 'package.json')), server = readJson(SERVER_JSON)) {
  const npm = server.packages?.find((p) => p.registryType === 'npm');
  return [
    ['name', pkg.mcpName, server.name],
    ['version', pkg.version, server.version],
    ['packages[npm].identifier', pkg.name, npm?.identifier],
    ['packages[npm].version', pkg.version, npm?.version],
  ].filter(([, expected, actual]) => expected !== actual);
}

/** Schema errors of a server.json document against the vendored registry schema (empty when valid). */
export function schemaErrors(server = readJson(SERVER_JSON)) {
  // Ajv and its formats are devDependencies, loaded only here.
  const require = createRequire(import.meta.url);
  const Ajv = require('ajv').default;
  const addFormats = require('ajv-formats').default;
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const validate = ajv.compile(readJson(SCHEMA));
  if (validate(server)) return [];
  return validate.errors.map((e) => `${e.instancePath || '/'} ${e.message}`);
}

function write() {
  const pkg = readJson(join(ROOT, 'package.json'));
  const server = readJson(SERVER_JSON);
  server.name = pkg.mcpName;
  server.version = pkg.version;
  for (const p of server.packages ?? []) {
    if (p.registryType === 'npm' && p.identifier === pkg.name) p.version = pkg.version;
  }
  writeFileSync(SERVER_JSON, `${JSON.stringify(server, null, 2)}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) write();
  const problems = [
    ...differences().map(([path, expected, actual]) => `${path} is ${actual}, package.json says ${expected}`),
    ...schemaErrors(),
  ];
  if (problems.length > 0) {
    console.error(`server.json: ${problems.join('; ')}`);
    process.exit(1);
  }
}
