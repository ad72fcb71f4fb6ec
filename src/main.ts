// What a command does once cli.ts has checked the Node.js version: settings, then a transport, or
// doctor, usage, ledger export, --help or --version.
import { ConfigError, parseCommandLine } from './config/config.js';
import { helpText } from './config/help.js';
import { startupWarnings } from './config/startup-warnings.js';
import { createLogger } from './lib/log.js';
import { selectTools } from './mcp/tool-selection.js';
import { createRuntime } from './runtime.js';
import { runStdio } from './transports/stdio.js';
import { VERSION } from './version.js';

async function main(): Promise<number | undefined> {
  const { command, config, json, live, since, user, format, byUser } = parseCommandLine(
    process.argv.slice(2),
    process.env,
  );
  if (command === 'help') {
    process.stdout.write(helpText(VERSION)); // allow-stdout: --help is not a server run
    return 0;
  }
  if (command === 'version') {
    process.stdout.write(`${VERSION}\n`); // allow-stdout: --version is not a server run
    return 0;
  }
  if (command === 'usage') {
    // A report for a person, read from the ledger: no server starts, and nothing is written.
    const { usageCommand } = await import('./tools/usage/usage-command.js');
    process.stdout.write(await usageCommand(config, json, createLogger(config.logLevel), byUser === true)); // allow-stdout: usage prints a report, it is not a server run
    return 0;
  }
  if (command === 'ledger-export') {
    // Every billed call as JSON Lines for jq and spreadsheets: read only, like usage.
    const { exportCommand } = await import('./tools/usage/export-command.js');
    await exportCommand(config, { since, user, format }, createLogger(config.logLevel), writeStdout);
    return 0;
  }
  // The tool selection is validated before anything starts: nothing runs half-configured.
  selectTools(config);
  const log = createLogger(config.logLevel);
  const warnings = startupWarnings(config, process.argv.slice(2));
  for (const warning of warnings) log.warn(warning);
  // doctor and the HTTP transport are loaded only when used: stdio start-up stays small.
  if (command === 'doctor') {
    const { formatReport, LIVE_NOTICE, runDoctor } = await import('./doctor/doctor.js');
    // Said before anything is sent: the live checks are billed.
    if (live) process.stderr.write(`${LIVE_NOTICE}\n`);
    const report = await runDoctor(config, { live });
    process.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report)); // allow-stdout: doctor prints a report, it is not a server run
    return report.ok ? 0 : 1;
  }
  if (!config.cwdIsWorkspace) {
    log.info(
      `the working directory ${config.cwd} is not a project directory: local files are read only from ` +
        `${config.inputRootsSet ? 'GATEWAY_INPUT_ROOTS' : "the client's roots"}, and files are saved in ` +
        `${config.outputDir} unless the client shares roots`,
    );
  }
  const runtime = createRuntime(config, warnings);
  if (config.transport === 'http') await (await import('./transports/http/serve.js')).runHttp(runtime);
  else await runStdio(runtime);
  return undefined;
}

/** Writes to stdout, waiting while the pipe is full (a long export into `head` or a slow reader). */
function writeStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve())); // allow-stdout: ledger export prints the ledger, it is not a server run
  });
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof ConfigError) {
      process.stderr.write(`gateway-tools-mcp: ${error.message}\n`);
      process.exit(2);
    }
    if (error instanceof Error && error.name === 'LedgerUnavailable') {
      // `usage` or `ledger export` could not read the ledger: its message says where and what to check.
      process.stderr.write(`gateway-tools-mcp: ${error.message}\n`);
      process.exit(1);
    }
    process.stderr.write(
      `gateway-tools-mcp: fatal: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exit(1);
  },
);
