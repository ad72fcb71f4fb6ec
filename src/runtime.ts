import type { Config } from './config/config.js';
import { proxyPasswords } from './config/proxy-settings.js';
import { createService, type Service } from './gateway/index.js';
import { Ledger, ledgerOptions } from './ledger/ledger.js';
import { createLogger, type Logger } from './lib/log.js';
import { secretScrubber } from './lib/secrets.js';

/**
 * What lives once per process and is shared by every MCP session: settings, the service client,
 * the ledger and the logger (the tools keep their caches per Runtime themselves). A transport builds one Runtime and one MCP server per session from it.
 */
export interface Runtime {
  config: Config;
  service: Service;
  log: Logger;
  scrub: (text: string) => string;
  /** The exact secrets (key, MCP token, OAuth client secret, base URL and proxy passwords) no log line or tool result may carry. */
  secrets: readonly string[];
  /** Settings that weaken the server (startup-warnings.ts): logged once, and told to each client. */
  startupWarnings: readonly string[];
  /**
   * The ledger of billed calls, shared with every server process of the user (GATEWAY_LEDGER_DIR)
   * or of a team (GATEWAY_LEDGER_URL), opened on first use: a server that bills nothing makes no
   * folder. A ledger that cannot be opened refuses each billed call (LedgerUnavailable).
   */
  ledger(): Ledger;
  /** Closes the ledger's database, if it was opened. */
  closeLedger(): Promise<void>;
  /** Work to let finish, within its own bound, before the process closes (a webhook's deliveries). */
  beforeClose: (() => Promise<void>)[];
}

export function createRuntime(config: Config, startupWarnings: readonly string[] = []): Runtime {
  const secrets = [
    config.apiKey,
    config.mcpToken,
    config.oauthClientSecret,
    ...urlPassword(config.baseUrl),
    ...(config.ledgerUrl ? urlPassword(config.ledgerUrl) : []),
    ...proxyPasswords(config.proxy),
  ].filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH);
  const scrub = secretScrubber(secrets);
  const log = createLogger(config.logLevel, scrub);
  let ledger: Ledger | undefined;
  return {
    config,
    secrets,
    service: createService(config, scrub, secrets),
    log,
    scrub,
    startupWarnings,
    ledger: () => {
      ledger ??= Ledger.open(ledgerOptions(config, log));
      return ledger;
    },
    closeLedger: async () => {
      await ledger?.close();
    },
    beforeClose: [],
  };
}

/** Shorter strings are not scrubbed: replacing them would mangle ordinary text. */
const MIN_SECRET_LENGTH = 4;

/** A password in the base URL (https://user:pass@host), raw and decoded. */
function urlPassword(baseUrl: string): string[] {
  try {
    const { password } = new URL(baseUrl);
    if (!password) return [];
    const decoded = decodeURIComponent(password);
    return decoded === password ? [password] : [password, decoded];
  } catch {
    return [];
  }
}

/**
 * A value each Runtime has one of, made on first use: a tool's cache, shared by the sessions of
 * the process.
 */
export function perRuntime<T>(make: (runtime: Runtime) => T): (runtime: Runtime) => T {
  const values = new WeakMap<Runtime, T>();
  return (runtime) => {
    let value = values.get(runtime);
    if (value === undefined) {
      value = make(runtime);
      values.set(runtime, value);
    }
    return value;
  };
}

export async function closeRuntime(runtime: Runtime): Promise<void> {
  await Promise.all(runtime.beforeClose.map((finish) => finish().catch(() => undefined)));
  await runtime.service.client.close();
  await runtime.closeLedger();
}
