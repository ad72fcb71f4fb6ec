// Writes docs/configuration.md from the settings table (src/config/settings.ts), the same table
// `--help` prints: `npm run docs:config`. test/config/settings-table.test.ts fails when the
// file differs from what this makes, so the page cannot fall behind the code.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shownDefault, shownRange } from '../src/config/help.js';
import { SETTING_GROUPS, SETTINGS, type Setting } from '../src/config/settings.js';

export const CONFIGURATION_DOC = resolve(fileURLToPath(import.meta.url), '../../docs/configuration.md');

export function configurationDoc(): string {
  const switches = SETTINGS.filter((s) => s.switch).map((s) => `\`${s.flag}\``);
  const example = SETTINGS.find((s) => s.key === 'port')!;
  const groups = Object.entries(SETTING_GROUPS).flatMap(([group, title]) => [
    `## ${title}`,
    '',
    '| variable | flag | default | what it does |',
    '|---|---|---|---|',
    ...SETTINGS.filter((s) => s.group === group).map(row),
    '',
  ]);
  return [
    '# Configuration',
    '',
    '<!-- Made by `npm run docs:config` from the settings table in src/config/settings.ts:',
    '     change the table, then run it. A test fails while this file and the table differ. -->',
    '',
    'Every setting is an environment variable and a command-line flag; the flag wins when both are',
    'given. An invalid value stops the server at start-up with exit status 2 and one line naming',
    `the setting and the problem. ${switches.join(', ')} needs no value; every other flag takes one`,
    `(\`${example.flag} 8080\` or \`${example.flag}=8080\`). \`gateway-tools-mcp --help\` prints the same list, and`,
    '`gateway-tools-mcp doctor` shows the model each default resolves to.',
    '',
    'A *secret* setting is never shown in an error, and given as a flag it draws a warning at',
    "start-up: any local user can read a process's arguments, so prefer the variable.",
    '',
    ...groups,
    '## Proxy',
    '',
    'The standard proxy variables are read too; they have no flags: `HTTPS_PROXY`, `HTTP_PROXY` and',
    '`NO_PROXY`, each also in lowercase (which wins). The README, under [Settings](../README.md#settings),',
    'says how they apply.',
    '',
  ].join('\n');
}

function row(s: Setting): string {
  const shown = shownDefault(s);
  const range = shownRange(s);
  const value = shown ? (shown.literal ? `\`${shown.text}\`` : shown.text) : '—';
  const cells = [
    `\`${s.env}\``,
    `\`${s.flag}\``,
    range ? `${value} (range ${range})` : value,
    s.secret ? `*secret:* ${s.help}` : s.help,
  ];
  return `| ${cells.map((cell) => cell.replaceAll('|', '\\|')).join(' | ')} |`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(CONFIGURATION_DOC, configurationDoc());
}
