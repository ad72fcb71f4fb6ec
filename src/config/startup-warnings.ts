import { homedir } from 'node:os';
import { parse as parsePath, resolve } from 'node:path';
import { isNonPublicAddress } from '../lib/addresses.js';
import { type Config, secretFlagsGiven } from './config.js';

/**
 * Settings that work but weaken the server, said once at start-up (stderr, level warn): a secret
 * given as a flag, a gateway key sent in clear text across a network, protections switched off.
 */
export function startupWarnings(
  config: Pick<
    Config,
    | 'baseUrl'
    | 'apiKey'
    | 'allowPrivateUrls'
    | 'inputRoots'
    | 'transport'
    | 'host'
    | 'mcpToken'
    | 'confirm'
    | 'ledgerUrl'
  >,
  argv: readonly string[],
): string[] {
  const warnings = secretFlagsGiven(argv).map(
    ({ flag, env }) =>
      `${flag} is visible to every user of this machine in process listings; set ${env}${env === 'GATEWAY_API_KEY' ? ' or GATEWAY_API_KEY_FILE' : ''} instead`,
  );
  const base = new URL(config.baseUrl);
  if (config.apiKey && base.protocol === 'http:' && !isLocal(base.hostname)) {
    warnings.push(
      `GATEWAY_BASE_URL is plain http to ${base.hostname}: the gateway key crosses the network unencrypted; use https`,
    );
  }
  if (config.allowPrivateUrls.includes('*')) {
    warnings.push(
      'GATEWAY_ALLOW_PRIVATE_URLS is *: audio URLs and video downloads may reach any address on this machine and its networks',
    );
  }
  const replayable = replayableConfirmations(config);
  if (replayable) warnings.push(replayable);
  const home = resolve(homedir());
  for (const root of config.inputRoots) {
    if (root === parsePath(root).root || resolve(root) === home) {
      warnings.push(
        `GATEWAY_INPUT_ROOTS includes ${root}: tools may read (and send to the gateway) audio and images anywhere under it`,
      );
    }
  }
  return warnings;
}

/**
 * Replicas on several hosts with one token take each other's confirmation states, but each keeps
 * the confirmations used in its own host's SQLite ledger: one replayed on another host would be
 * sent again. On loopback every replica is on this host and shares its ledger; with
 * GATEWAY_LEDGER_URL every replica shares the used confirmations. Said at start-up and by doctor.
 */
export function replayableConfirmations(
  config: Pick<Config, 'transport' | 'host' | 'mcpToken' | 'confirm' | 'ledgerUrl'>,
): string | undefined {
  const exposed = !/^(localhost|127\.\d+\.\d+\.\d+|::1|\[::1\])$/i.test(config.host);
  if (config.transport !== 'http' || !config.mcpToken || config.confirm.length === 0) return undefined;
  if (config.ledgerUrl || !exposed) return undefined;
  return "GATEWAY_CONFIRM with GATEWAY_MCP_TOKEN and no GATEWAY_LEDGER_URL: replicas on other hosts that share the token take this one's confirmations, and one replayed there is sent again; give every replica the same GATEWAY_LEDGER_URL (PostgreSQL)";
}

function isLocal(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || isNonPublicAddress(hostname);
}
