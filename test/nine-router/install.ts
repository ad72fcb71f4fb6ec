// The real gateway, 9router, pinned (see cached-packages.ts). Its install scripts only build
// optional native parts (better-sqlite3, a tray icon), so they are skipped; the published tarball
// lacks sql.js's WebAssembly file, which is taken from the sql.js package of the same version.
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureCachedPackage, npm, run } from '../cached-packages.js';

export const NINE_ROUTER_VERSION = '0.5.69';
const SQL_JS_VERSION = '1.14.2';

const WASM = ['node_modules', 'sql.js', 'dist', 'sql-wasm.wasm'];

/** The package's `app/` folder (the Next.js server 9router's own launcher starts). */
function appDir(root: string): string {
  return join(root, 'node_modules', '9router', 'app');
}

/** Makes sure 9router is installed and returns its `app/` folder. */
export async function ensureNineRouter(): Promise<string> {
  const root = await ensureCachedPackage({
    name: '9router',
    version: NINE_ROUTER_VERSION,
    async complete(scratch) {
      await npm(['pack', `sql.js@${SQL_JS_VERSION}`], scratch);
      await run('tar', ['xzf', `sql.js-${SQL_JS_VERSION}.tgz`, 'package/dist/sql-wasm.wasm'], {
        cwd: scratch,
      });
      copyFileSync(join(scratch, 'package', 'dist', 'sql-wasm.wasm'), join(appDir(scratch), ...WASM));
      rmSync(join(scratch, 'package'), { recursive: true, force: true });
      rmSync(join(scratch, `sql.js-${SQL_JS_VERSION}.tgz`), { force: true });
    },
  });
  return appDir(root);
}
