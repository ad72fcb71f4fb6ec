// The oldest Node.js the server runs on, checked by every entry before anything else is loaded:
// the ledger needs node:sqlite without a flag (22.13), and on an older Node the first billed call
// would fail deep inside with "No such built-in module". Kept free of imports and of syntax an
// older Node cannot parse, since it runs on exactly those.

/** package.json's `engines.node`, as a version (test/process/node-version.test.ts keeps them equal). */
export const OLDEST_NODE = '22.13.0';

/** The one line said on an older Node, or undefined on a Node new enough. */
export function tooOldNode(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [needMajor = 0, needMinor = 0] = OLDEST_NODE.split('.').map(Number);
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return undefined;
  return (
    `gateway-tools-mcp needs Node.js ${needMajor}.${needMinor} or later; this is ${version} — ` +
    `install Node.js ${needMajor} LTS or later (https://nodejs.org/en/download, or \`nvm install ${needMajor}\`) ` +
    'and make it the node your agent starts (first on its PATH).'
  );
}
