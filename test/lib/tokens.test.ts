// The token estimate (src/lib/tokens.ts) against a real tokenizer, gpt-tokenizer's o200k_base
// (the GPT-4o/GPT-5 family's), on real-looking pages: this project's prose, code and markdown,
// an HTML page made of them, and pages in Chinese, Japanese, Korean and Russian (the READMEs
// @biomejs/biome ships). The estimate errs high: never under the real count, at most 1.5 times it.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { endWithinTokens, estimateTokens, TokenProfile } from '../../src/lib/tokens.js';
import { PROJECT_ROOT } from '../harness/harness.js';

const read = (path: string) => readFileSync(join(PROJECT_ROOT, path), 'utf8');
const biome = dirname(createRequire(import.meta.url).resolve('@biomejs/biome/package.json'));
const readme = (lang: string) => readFileSync(join(biome, `README.${lang}.md`), 'utf8');

/** Markdown as a site would serve it: headings, paragraphs and code in tags with attributes. */
function asHtml(markdown: string): string {
  const blocks = markdown.split(/\n{2,}/).map((block) => {
    const escaped = block.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    if (block.startsWith('#'))
      return `<h2 id="s${block.length}" class="heading">${escaped.replace(/^#+ /, '')}</h2>`;
    if (block.startsWith('```')) return `<pre class="language-sh"><code>${escaped}</code></pre>`;
    return `<p class="prose">${escaped.replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`;
  });
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Testing</title></head><body><main>\n${blocks.join('\n')}\n</main></body></html>`;
}

/** The lines of a translated README that are mostly its language, without markup. */
const proseOf = (text: string) =>
  text
    .split('\n')
    .filter((line) => /[\u0080-\uffff]{6}/.test(line) && !/[<>[\]()|]/.test(line))
    .join('\n');

const PAGES: Record<string, () => string> = {
  'prose (docs/architecture.md)': () => read('docs/architecture.md'),
  'prose (docs/testing.md)': () => read('docs/testing.md'),
  'code (TypeScript)': () => read('src/tools/result-budget.ts') + read('src/mcp/call-pipeline.ts'),
  'markdown with tables (docs/benchmarks.md)': () => read('docs/benchmarks.md'),
  'markdown (README.md)': () => read('README.md'),
  HTML: () => asHtml(read('docs/testing.md')),
  'Chinese page': () => readme('zh-CN'),
  'Chinese prose': () => proseOf(readme('zh-CN') + readme('zh-TW')),
  'Japanese page': () => readme('ja'),
  'Japanese prose': () => proseOf(readme('ja')),
  'Korean page': () => readme('kr'),
  'Russian page': () => readme('ru'),
  JSON: () => read('package.json') + read('tsconfig.json'),
};

describe('the token estimate', () => {
  for (const [kind, page] of Object.entries(PAGES)) {
    it(`errs high, but not by much, on ${kind}`, () => {
      const text = page();
      expect(text.length).toBeGreaterThan(400);
      const real = countTokens(text);
      const estimate = estimateTokens(text);
      expect(estimate, `${estimate} estimated, ${real} real`).toBeGreaterThanOrEqual(real);
      expect(estimate, `${estimate} estimated, ${real} real`).toBeLessThanOrEqual(real * 1.5);
    });
  }

  it('is no lower when a page is counted from any offset on, by blocks', () => {
    const text = read('docs/testing.md').repeat(3);
    const profile = new TokenProfile(text);
    for (const from of [0, 1, 16_383, 16_384, 20_000, text.length - 10, text.length]) {
      const direct = estimateTokens(text, from);
      expect(profile.rest(from)).toBeGreaterThanOrEqual(direct);
      expect(profile.rest(from)).toBeLessThanOrEqual(direct * 1.01 + 5);
    }
  });

  it('finds where a part of at most N tokens ends, and always moves on', () => {
    const text = read('docs/architecture.md');
    for (const budget of [1, 50, 1_000]) {
      const end = endWithinTokens(text, 100, budget);
      expect(end).toBeGreaterThan(100);
      if (budget > 1) expect(estimateTokens(text, 100, end)).toBeLessThanOrEqual(budget);
      expect(countTokens(text.slice(100, end))).toBeLessThanOrEqual(Math.max(budget, 1));
    }
    // A run of one kind longer than the budget is cut inside it.
    const run = 'x'.repeat(10_000);
    expect(estimateTokens(run, 0, endWithinTokens(run, 0, 100))).toBeLessThanOrEqual(100);
    expect(endWithinTokens('', 0, 100)).toBe(0);
  });
});
