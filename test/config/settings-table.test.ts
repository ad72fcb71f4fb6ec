import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_DOC, configurationDoc } from '../../scripts/configuration-doc.js';
import { parseCommandLine } from '../../src/config/config.js';
import { CONFIRM_CHOICES } from '../../src/config/confirm-kinds.js';
import { helpText, shownDefault, shownRange } from '../../src/config/help.js';
import { SETTING_GROUPS, SETTINGS, type Setting } from '../../src/config/settings.js';
import { TOOL_GROUPS } from '../../src/config/tool-groups.js';
import { SPEECH_TIMEOUT_FACTOR } from '../../src/gateway/endpoints/audio.js';
import { TRANSCRIBE_TIMEOUT_FACTOR } from '../../src/gateway/endpoints/transcriptions.js';
import { SUBMIT_TIMEOUT_FACTOR } from '../../src/gateway/endpoints/videos.js';
import { selectTools } from '../../src/mcp/tool-selection.js';
import { ALL_TOOLS } from '../../src/tools/index.js';

const HELP = helpText('1.2.3');
const parse = (argv: string[]) => parseCommandLine(argv, {}, '/work/project');

/** A setting's block of `--help`: its flag line and the lines under it. */
function helpBlock(s: Setting): string {
  const lines = HELP.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`  ${s.flag} `) || l === `  ${s.flag}`);
  expect(start, s.flag).toBeGreaterThan(-1);
  const end = lines.findIndex((l, i) => i > start && !l.startsWith(' '.repeat(4)));
  return lines
    .slice(start, end)
    .map((l) => l.trim())
    .join(' ');
}

describe('docs/configuration.md', () => {
  it('is what the settings table makes (run `npm run docs:config` after changing the table)', () => {
    expect(readFileSync(CONFIGURATION_DOC, 'utf8')).toBe(configurationDoc());
  });

  it('lists every setting once, under its group, with its default', () => {
    const doc = configurationDoc();
    for (const s of SETTINGS) {
      const rows = doc.split('\n').filter((l) => l.startsWith(`| \`${s.env}\` | \`${s.flag}\` |`));
      expect(rows, s.env).toHaveLength(1);
      const section = doc.slice(0, doc.indexOf(rows[0]!));
      expect(section.slice(section.lastIndexOf('\n## ')), s.env).toContain(`## ${SETTING_GROUPS[s.group]}`);
      const shown = shownDefault(s);
      if (shown) expect(rows[0], s.env).toContain(shown.literal ? `\`${shown.text}\`` : shown.text);
    }
  });
});

describe('--help', () => {
  it('names every tool family in its first lines, ask_model and list_models too', () => {
    const intro = HELP.slice(0, HELP.indexOf('\n\n'));
    const family: Record<string, string> = {
      web_search: 'web search',
      web_fetch: 'web fetch',
      video_generate: 'video',
      video_edit: 'video',
      video_extend: 'video',
      video_status: 'video',
      audio_speech: 'speech',
      audio_transcribe: 'transcription',
      list_models: 'list_models',
      ask_model: 'ask_model',
      usage: 'usage',
    };
    for (const tool of ALL_TOOLS) {
      expect(family[tool.name], `${tool.name} has no family in this test`).toBeDefined();
      expect(intro).toContain(family[tool.name]);
    }
  });

  it('shows every setting under its group, with the flag, the variable and the help', () => {
    for (const s of SETTINGS) {
      const block = helpBlock(s);
      expect(block).toContain(s.env);
      expect(block).toContain(s.help);
      const heading = HELP.lastIndexOf(`\n${SETTING_GROUPS[s.group]}:\n`, HELP.indexOf(`  ${s.flag}`));
      expect(heading, s.flag).toBeGreaterThan(-1);
      const groupsAfter = Object.values(SETTING_GROUPS).filter(
        (title) => HELP.indexOf(`\n${title}:\n`) > heading,
      );
      expect(HELP.indexOf(`  ${s.flag}`), s.flag).toBeLessThan(
        Math.min(...groupsAfter.map((title) => HELP.indexOf(`\n${title}:\n`)), HELP.length),
      );
    }
  });

  it('prints the default each setting really has', () => {
    const { config } = parse([]);
    for (const s of SETTINGS) {
      if (!('default' in s)) continue;
      const key = s.key === 'outputDir' ? 'outputDirSetting' : s.key;
      expect((config as Record<string, unknown>)[key], s.env).toEqual(s.default);
      expect(helpBlock(s)).toContain(`default: ${shownDefault(s)!.text}`);
    }
    expect(helpBlock(SETTINGS.find((s) => s.key === 'videoModel')!)).toContain(
      `default: ${config.videoModel}`,
    );
  });

  it('prints the range each number setting really takes', () => {
    const numbers = SETTINGS.filter((s) => shownRange(s) !== undefined);
    expect(numbers.map((s) => s.key)).toContain('timeoutMs');
    for (const s of numbers) {
      const [min, max] = shownRange(s)!.split('-').map(Number) as [number, number];
      expect(helpBlock(s)).toContain(`range ${min}-${max}`);
      expect((parse([s.flag, String(min)]).config as Record<string, unknown>)[s.key]).toBe(min);
      expect((parse([s.flag, String(max)]).config as Record<string, unknown>)[s.key]).toBe(max);
      expect(() => parse([s.flag, String(min - 1)]), s.flag).toThrow(`must be at least ${min}`);
      expect(() => parse([s.flag, String(max + 1)]), s.flag).toThrow(`must be at most ${max}`);
    }
  });

  it('names the --confirm kinds the setting accepts, each accepted', () => {
    const block = helpBlock(SETTINGS.find((s) => s.key === 'confirm')!);
    for (const choice of CONFIRM_CHOICES) {
      expect(block).toContain(choice);
      expect(() => parse(['--confirm', choice])).not.toThrow();
    }
    expect(parse(['--confirm', 'audio']).config.confirm).toEqual(['speech', 'transcription']);
  });

  it('names the tool groups --tools accepts, each accepted', () => {
    const block = helpBlock(SETTINGS.find((s) => s.key === 'tools')!);
    for (const group of TOOL_GROUPS) {
      expect(block).toContain(group);
      expect(selectTools(parse(['--tools', group]).config).some((t) => t.group === group)).toBe(true);
    }
  });

  it('gives the timeout factors the endpoints use', () => {
    const block = helpBlock(SETTINGS.find((s) => s.key === 'timeoutMs')!);
    expect(block).toContain(`speech waits ${SPEECH_TIMEOUT_FACTOR}x`);
    expect(block).toContain(`video submits ${SUBMIT_TIMEOUT_FACTOR}x`);
    expect(block).toContain(`transcription ${TRANSCRIBE_TIMEOUT_FACTOR}x`);
  });

  it('shows --stateless without a value, as the parser takes it', () => {
    const stateless = SETTINGS.find((s) => s.key === 'stateless')!;
    expect(HELP).toContain(`  ${stateless.flag} `);
    expect(HELP).not.toContain(`${stateless.flag} <value>`);
    expect(parse([stateless.flag]).config.stateless).toBe(true);
    expect(SETTINGS.filter((s) => s.switch)).toEqual([stateless]);
  });

  it('keeps every line within 100 columns', () => {
    expect(HELP.split('\n').filter((l) => l.length > 100)).toEqual([]);
  });
});
