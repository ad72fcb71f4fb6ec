import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The shape of the house, checked on the source text: folders by feature, none a grab bag or
// too big to take in, no import cycle between modules or between folders, and each layer knowing
// only the ones below it (LAYERS). A change that breaks one of these fails here, naming the files.

const SRC = join(projectRoot(dirname(fileURLToPath(import.meta.url))), 'src');
const MAX_FILES_PER_FOLDER = 12;
const GRAB_BAG_NAMES = ['support', 'utils', 'helpers', 'common'];

interface Module {
  /** Path under src/, with `/` separators. */
  file: string;
  /** The src modules it imports or re-exports, type-only and dynamic imports included. */
  imports: string[];
  /** How many quoted relative `.js` paths its code holds. */
  specifiersWritten: number;
}

const entries = readdirSync(SRC, { recursive: true, withFileTypes: true });
const folders = [SRC, ...entries.filter((e) => e.isDirectory()).map((e) => join(e.parentPath, e.name))].map(
  (dir) => ({
    path: inSrc(dir),
    files: readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile()).length,
  }),
);
const modules: Module[] = entries
  .filter((e) => e.isFile() && e.name.endsWith('.ts'))
  .map((e) => {
    const path = join(e.parentPath, e.name);
    const code = withoutComments(readFileSync(path, 'utf8'));
    return {
      file: inSrc(path),
      imports: relativeImports(code, path),
      specifiersWritten: code.match(/['"]\.\.?\/[^'"]+\.js['"]/g)?.length ?? 0,
    };
  });
const byFile = new Map(modules.map((m) => [m.file, m]));

/** The nearest folder above `dir` with a package.json: wherever this file sits in test/. */
function projectRoot(dir: string): string {
  if (existsSync(join(dir, 'package.json'))) return dir;
  const parent = dirname(dir);
  if (parent === dir) throw new Error('no package.json above the tests');
  return projectRoot(parent);
}

function inSrc(path: string): string {
  return relative(SRC, path).split(sep).join('/');
}

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

/** The files a module's relative specifiers name (`./x.js` is the source `./x.ts`). */
function relativeImports(code: string, path: string): string[] {
  const specifiers = [
    // import x from, import type { x } from, export { x } from, export * from, import './x.js'
    ...code.matchAll(
      /(?:^|[;}\s])(?:import|export)\s+(?:type\s+)?(?:[\w$*{}\s,]*?\s*from\s*)?['"](\.[^'"]+)['"]/g,
    ),
    // import('./x.js'), typeof import('./x.js')
    ...code.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g),
  ].map((m) => m[1] as string);
  return specifiers.map((specifier) => {
    const target = resolve(dirname(path), specifier.replace(/\.js$/, '.ts'));
    // A specifier this scan cannot resolve would hide an edge: better to fail than to pass blind.
    if (!existsSync(target)) throw new Error(`${inSrc(path)}: cannot resolve ${specifier}`);
    return inSrc(target);
  });
}

/** Every import cycle in `graph`, each as the path that closes it (`a → b → a`). */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' → '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return cycles;
}

/**
 * The layers, top first (docs/architecture.md): a part may import its own layer's parts and
 * those of the layers below it, never one above; the parts of a layer may import each other as
 * long as no cycle forms. A part is a folder under src/ or a file at its top.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['cli.ts'],
  ['main.ts'],
  ['transports', 'doctor'],
  ['mcp'],
  ['tools'],
  ['runtime.ts'],
  ['views', 'files', 'ledger', 'shared-state', 'gateway'],
  ['config'],
  ['lib', 'version.ts', 'links.ts'],
];

/** The part a module belongs to: its top folder under src/, or the file itself at the top. */
function unitOf(file: string): string {
  return file.split('/')[0] as string;
}

/** Its layer's depth: 0 for the top. A part in no layer counts as the top, so it fails the test. */
function layerOf(unit: string): number {
  const depth = LAYERS.findIndex((layer) => layer.includes(unit));
  return depth === -1 ? 0 : depth;
}

/** Each part's imports of other parts, with one module edge that shows each. */
function unitGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const m of modules) {
    const from = unitOf(m.file);
    const targets = graph.get(from) ?? new Map<string, string>();
    graph.set(from, targets);
    for (const target of m.imports) {
      const to = unitOf(target);
      if (to !== from && !targets.has(to)) targets.set(to, `${m.file} → ${target}`);
    }
  }
  return graph;
}

describe('the shape of src/', () => {
  it('is seen whole by this scan', () => {
    expect(modules.length).toBeGreaterThan(50);
    // Every relative module path written in the code is read as an import: none slips past the
    // patterns (a multi-line import, an odd spacing).
    expect(modules.filter((m) => m.imports.length !== m.specifiersWritten).map((m) => m.file)).toEqual([]);
    // Edges of each kind the scan must see: value, type-only, and re-export.
    expect(byFile.get('mcp/create-server.ts')?.imports).toContain('mcp/call-pipeline.ts');
    expect(byFile.get('mcp/call-pipeline.ts')?.imports).toContain('mcp/client/connection.ts');
    expect(byFile.get('gateway/endpoints/responses.ts')?.imports).toContain(
      'gateway/endpoints/responses-stream.ts',
    );
  });

  it('finds a cycle when there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(importCycles(graph)).toEqual(['a.ts → b.ts → c.ts → a.ts']);
    expect(importCycles(new Map([['a.ts', ['b.ts']]]))).toEqual([]);
  });

  it('has no import cycle (type-only imports count: they tie the modules together just the same)', () => {
    expect(importCycles(new Map(modules.map((m) => [m.file, m.imports])))).toEqual([]);
  });

  it(`has no folder with more than ${MAX_FILES_PER_FOLDER} files`, () => {
    expect(folders.length).toBeGreaterThan(5);
    expect(folders.filter((f) => f.files > MAX_FILES_PER_FOLDER)).toEqual([]);
  });

  it('has no grab-bag folder (support, utils, helpers, common)', () => {
    const grabBags = folders.filter((f) => GRAB_BAG_NAMES.includes(f.path.split('/').pop() ?? ''));
    expect(grabBags.map((f) => f.path)).toEqual([]);
  });

  it('keeps its layers: each part imports only its own layer and the layers below', () => {
    const misplaced = [...unitGraph()].flatMap(([from, targets]) =>
      [...targets.keys()]
        .filter((to) => layerOf(to) < layerOf(from))
        .map((to) => `${from} (layer ${layerOf(from)}) → ${to} (layer ${layerOf(to)}): ${targets.get(to)}`),
    );
    expect(misplaced).toEqual([]);
  });

  it('has no cycle between its parts (folders and top-level files)', () => {
    const graph = new Map([...unitGraph()].map(([from, targets]) => [from, [...targets.keys()]]));
    expect(importCycles(graph)).toEqual([]);
  });

  it('keeps the protocol out of the tools: no input round, no confirmation asked from tool code', () => {
    // A tool declares what it needs from the client (usesFiles, confirm) and the call pipeline
    // settles it before run(); the protocol's rounds and the asking stay in mcp/.
    const asking =
      /\bInputNeeded\b|\bCallRound\b|\bround\.(ask|answer|state)\b|\bctx\.confirm\(|\belicitInput\b|\binputRequired\b/;
    const found = modules
      .filter((m) => m.file.startsWith('tools/'))
      .filter((m) => asking.test(withoutComments(readFileSync(join(SRC, m.file), 'utf8'))))
      .map((m) => m.file);
    expect(found).toEqual([]);
    expect(asking.test('ctx.confirm(call)')).toBe(true);
  });

  it('places every part of src/ in a layer', () => {
    const units = new Set(modules.map((m) => unitOf(m.file)));
    expect([...units].filter((unit) => !LAYERS.flat().includes(unit))).toEqual([]);
    expect(LAYERS.flat().filter((unit) => !units.has(unit))).toEqual([]);
  });
});
