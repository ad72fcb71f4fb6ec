import type { CallToolResult } from '@modelcontextprotocol/server';
import { withoutSecrets } from '../lib/secrets.js';

/**
 * The last guard before a result leaves the server: every configured secret (the gateway key,
 * the MCP token, a password in the base URL) is replaced by *** wherever it appears — text,
 * structured content, links. Error texts are scrubbed where they are made; this also covers
 * successful answers, in case a compromised or careless gateway echoes the key in a search
 * snippet, a page, a transcript or a video URL. Only the exact secrets are replaced, never
 * bearer-shaped text in general: a fetched page that documents `Authorization: Bearer ...`
 * stays intact.
 */
export function scrubResult(result: CallToolResult, secrets: readonly string[]): CallToolResult {
  // Almost every result holds no secret: look first, copy only when there is one to replace.
  return holdsSecret(result, secrets) ? (scrubValue(result, secrets) as CallToolResult) : result;
}

function holdsSecret(value: unknown, secrets: readonly string[]): boolean {
  if (typeof value === 'string') {
    for (const secret of secrets) if (value.includes(secret)) return true;
    return false;
  }
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const item of value) if (holdsSecret(item, secrets)) return true;
    return false;
  }
  for (const key in value) if (holdsSecret((value as Record<string, unknown>)[key], secrets)) return true;
  return false;
}

function scrubValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') return withoutSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, secrets));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[key] = scrubValue(v, secrets);
    return out;
  }
  return value;
}
