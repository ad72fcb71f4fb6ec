// Builds each view (src/views/app/) into one self-contained HTML page: its script (with the views'
// own bridge to the host, host-bridge.ts) bundled and minified for the browser, and the shared
// style sheet, both inlined. Nothing in a page is fetched: a host's sandbox allows no script or
// style from elsewhere. scripts/build.mjs embeds the pages in the bundle; run from source, the
// server calls this on the first read of a view (src/views/view-html.ts).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const APP_DIR = fileURLToPath(new URL('../src/views/app/', import.meta.url));
const VIEW_SCRIPTS = { 'video-view': 'video-view.ts', 'audio-view': 'audio-view.ts' };

/** Every view's HTML, by its resource name. */
export async function buildViews() {
  return (await buildViewsWithInputs()).pages;
}

/** The pages, and the esbuild metafile of their scripts (for the third-party notices). */
export async function buildViewsWithInputs() {
  const css = await readFile(`${APP_DIR}view.css`, 'utf8');
  const built = await Promise.all(
    Object.entries(VIEW_SCRIPTS).map(async ([name, entry]) => [name, await script(entry)]),
  );
  return {
    pages: Object.fromEntries(built.map(([name, { js }]) => [name, page(js, css)])),
    metafile: { outputs: Object.assign({}, ...built.map(([, { metafile }]) => metafile.outputs)) },
  };
}

async function script(entry) {
  const result = await build({
    entryPoints: [`${APP_DIR}${entry}`],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    outdir: 'views',
  });
  // A literal "</script" inside the code would end the element early.
  return { js: result.outputFiles[0].text.replaceAll('</script', '<\\/script'), metafile: result.metafile };
}

function page(js, css) {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<style>${css.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\s*\n\s*/g, '')}</style></head>` +
    `<body><main id="view"></main><script type="module">${js}</script></body></html>`
  );
}
