// Modules of the dependencies that this server never executes, replaced in the bundle by small
// stand-ins so that start-up does not parse them (together about half of the bundle). Each
// stand-in fails loudly if it is ever reached. The build fails if a stub stops matching an import,
// so the list cannot silently go stale when a dependency changes.
const refuse = (what) => `() => { throw new Error(${JSON.stringify(`${what} is not part of this build`)}); }`;

export const BUNDLE_STUBS = [
  {
    // zod's error messages in ~50 languages: the server only uses the default English messages,
    // which zod installs from locales/en.js directly.
    importer: /node_modules\/zod\/v4\/(classic\/external|core\/index)\.js$/,
    path: '../locales/index.js',
    contents: 'export { default as en } from "zod/v4/locales/en.js";',
  },
  {
    // The legacy SSE transport reads a POST body with raw-body (and iconv-lite, ~540 KB) unless it
    // is handed the parsed body, which src/transports/http/sse.ts always does.
    importer: /node_modules\/@modelcontextprotocol\/server-legacy\/dist\/sse-[\w-]+\.mjs$/,
    path: 'raw-body',
    contents: `export default ${refuse('raw-body')};`,
  },
  {
    // The SDK Server's default JSON Schema validator (Ajv and ajv-formats, ~290 KB): only used to
    // check elicitation answers, and src/mcp/server.ts always gives the Server its own validator.
    importer: /node_modules\/@modelcontextprotocol\/server\/dist\/(index|mcp-[\w-]+|stdio)\.mjs$/,
    path: '@modelcontextprotocol/server/_shims',
    contents: `export { default as process } from 'node:process';
export class DefaultJsonSchemaValidator { constructor() { (${refuse('Ajv')})(); } }`,
  },
];

/** esbuild plugin applying BUNDLE_STUBS; fails the build if one of them matched nothing. */
export function bundleStubs() {
  return {
    name: 'bundle-stubs',
    setup(build) {
      const used = new Set();
      BUNDLE_STUBS.forEach((stub, index) => {
        const namespace = `bundle-stub-${index}`;
        const filter = new RegExp(`^${stub.path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`);
        build.onResolve({ filter }, (args) => {
          if (!stub.importer.test(args.importer.replaceAll('\\', '/'))) return undefined;
          used.add(index);
          return { path: stub.path, namespace };
        });
        build.onLoad({ filter: /.*/, namespace }, () => ({
          contents: stub.contents,
          resolveDir: process.cwd(),
          loader: 'js',
        }));
      });
      build.onEnd((result) => {
        if (result.errors.length > 0) return;
        const stale = BUNDLE_STUBS.filter((_, index) => !used.has(index));
        if (stale.length > 0) {
          const names = stale.map((stub) => stub.path).join(', ');
          return {
            errors: [
              { text: `bundle stubs that matched no import (update scripts/bundle-stubs.mjs): ${names}` },
            ],
          };
        }
      });
    },
  };
}
