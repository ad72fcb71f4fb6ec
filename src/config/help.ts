// `--help`: the commands, then every setting of the table (settings.ts) under its group, with its
// range and default printed from the table rather than restated in words.
import { z } from 'zod';
import { OLDEST_NODE } from '../lib/node-version.js';
import { docUrl, GATEWAY_GUIDE_URL } from '../links.js';
import { SETTING_GROUPS, SETTINGS, type Setting } from './settings.js';

const LINE_WIDTH = 100;

/** A setting's default as it is shown; undefined when it has none (a key, a token). */
export function shownDefault(s: Setting): { text: string; literal: boolean } | undefined {
  if (s.computedDefault !== undefined) return { text: s.computedDefault, literal: false };
  if (!('default' in s)) return undefined;
  const value = s.default;
  const empty = value === '' || (Array.isArray(value) && value.length === 0);
  if (empty) return { text: 'none', literal: false };
  return { text: Array.isArray(value) ? value.join(',') : String(value), literal: true };
}

/** The numbers a numeric setting takes, e.g. `0-10`; undefined for any other setting. */
export function shownRange(s: Setting): string | undefined {
  return s.schema instanceof z.ZodNumber ? `${s.schema.minValue}-${s.schema.maxValue}` : undefined;
}

export function helpText(version: string): string {
  const left = (s: Setting) => (s.switch ? s.flag : `${s.flag} <value>`);
  const width = Math.max(...SETTINGS.map((s) => left(s).length));
  const indent = ' '.repeat(2 + width + 2);
  const groups = Object.entries(SETTING_GROUPS).map(([group, title]) => {
    const rows = SETTINGS.filter((s) => s.group === group).map((s) => {
      const line = `  ${left(s).padEnd(width)}  ${s.env}`;
      const text = described(s).flatMap((part) => wrap(part, LINE_WIDTH - indent.length));
      return [line, ...text.map((l) => indent + l)].join('\n');
    });
    return [`${title}:`, ...rows, ''].join('\n');
  });
  return [
    ...wrap(
      `gateway-tools-mcp ${version} — an MCP server that gives coding agents an AI gateway as ` +
        'tools: web search, web fetch, video jobs, speech, transcription, list_models and ask_model, ' +
        'and a usage report of what billed calls cost.',
      LINE_WIDTH,
    ),
    '',
    ...wrap(
      `Needs Node.js ${OLDEST_NODE.split('.').slice(0, 2).join('.')} or later, and a running 9router ` +
        '(the AI gateway, on http://127.0.0.1:20128 by default) with a key and a web search provider.',
      LINE_WIDTH,
    ),
    'Getting a gateway, step by step, and everything else:',
    `  ${GATEWAY_GUIDE_URL}`,
    `  ${docUrl('README.md')}`,
    '',
    'Usage:',
    '  gateway-tools-mcp [options]          serve MCP (stdio unless --transport http)',
    '  gateway-tools-mcp doctor [--json]    check the gateway, the key, the default models, the',
    '                                       output directory and the input roots, the ledger and',
    '                                       the limits',
    '  gateway-tools-mcp doctor --live      also send one web search and one web fetch through',
    '                                       the providers the tools use (billed by them, recorded',
    '                                       in the ledger), to prove the providers answer',
    '  gateway-tools-mcp usage [--json]     billed calls per kind in the last hour and day, the',
    '                                       limits and what they leave, the estimated cost and the',
    '                                       latest calls, from the ledger (GATEWAY_LEDGER_DIR)',
    "  gateway-tools-mcp usage --by-user    each person's billed calls in the last 24 hours and",
    '                                       this month, and their GATEWAY_LIMITS_PER_USER',
    '  gateway-tools-mcp ledger export [--since TIME] [--user ID] [--format jsonl|csv]',
    '                                       every billed call (of one person) as JSON Lines or',
    '                                       CSV, oldest first; TIME is a date (2026-11-01) or a',
    '                                       span back from now (7d, 12h)',
    '  gateway-tools-mcp --help | --version',
    '',
    'Options (each also read from the environment variable beside it; flags win):',
    '',
    ...groups,
    ...wrap(
      'HTTPS_PROXY, HTTP_PROXY and NO_PROXY (lowercase too) are read as well; they have no flags.',
      LINE_WIDTH,
    ),
    '',
  ].join('\n');
}

/** The help sentence, then the default and range the table gives: `default: 2; range 0-10`. */
function described(s: Setting): string[] {
  const shown = shownDefault(s);
  const range = shownRange(s);
  const facts = [shown && `default: ${shown.text}`, range && `range ${range}`].filter(Boolean);
  return facts.length > 0 ? [s.help, facts.join('; ')] : [s.help];
}

/** Words into lines of at most `width` characters (a longer word gets a line of its own). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}
