import type { ServiceClient } from '../client.js';
import { ServiceError } from '../errors.js';

/**
 * GET /api/health (9router; no auth). Answers how the service responded: `ok` for 2xx,
 * `missing` for 404 (other gateways have no such route), or throws the ServiceError for
 * anything else (unreachable, timeout, other status).
 */
export async function checkHealth(client: ServiceClient, signal?: AbortSignal): Promise<'ok' | 'missing'> {
  try {
    await client.json<unknown>({ method: 'GET', path: '/api/health', signal, retry: 'safe' });
    return 'ok';
  } catch (error) {
    if (error instanceof ServiceError && (error.status === 404 || error.kind === 'malformed'))
      return 'missing';
    throw error;
  }
}

/**
 * What the service made of the key: `accepted`, `refused` (401/403 from the service itself), or
 * `unknown` (an answer that says neither, e.g. 404 from a gateway without the route).
 */
export type KeyVerdict =
  | { verdict: 'accepted'; status: number }
  | { verdict: 'refused' | 'unknown'; error: ServiceError };

export const KEY_PROBE = 'POST /v1/search';

/**
 * Asks where the service authenticates and nothing is spent: POST /v1/search with an empty body.
 * 9router checks the key first, then refuses the body (400 "Missing required field") before any
 * provider is asked. The model lists cannot tell: they answer without a key, or with a wrong one.
 * Throws the ServiceError when the service could not be asked (unreachable, timeout).
 */
export async function probeKey(client: ServiceClient, signal?: AbortSignal): Promise<KeyVerdict> {
  try {
    await client.json<unknown>({ method: 'POST', path: '/v1/search', json: {}, signal, retry: 'safe' });
    return { verdict: 'accepted', status: 200 };
  } catch (error) {
    if (!(error instanceof ServiceError) || error.kind !== 'http') throw error;
    const status = error.status ?? 0;
    // The gateway's own refusal of the key; one it tags with an upstream provider is not ours.
    const upstream = error.serviceMessage !== undefined && /^\s*\[/.test(error.serviceMessage);
    if ((status === 401 || status === 403) && !upstream) return { verdict: 'refused', error };
    if (status === 400 || status === 422) return { verdict: 'accepted', status };
    return { verdict: 'unknown', error };
  }
}
