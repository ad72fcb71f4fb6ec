import type { CancelSignal } from '../cancel.js';
import type { ServiceClient } from './client.js';
import { ServiceError } from './errors.js';

/**
 * GET /api/health (9router; no auth). Answers how the service responded: `ok` for 2xx,
 * `missing` for 404 (other gateways have no such route), or throws the ServiceError for
 * anything else (unreachable, timeout, other status).
 */
export async function checkHealth(client: ServiceClient, signal?: CancelSignal): Promise<'ok' | 'missing'> {
  try {
    await client.json<unknown>({ method: 'GET', path: '/api/health', signal, retry: 'safe' });
    return 'ok';
  } catch (error) {
    if (error instanceof ServiceError && (error.status === 404 || error.kind === 'malformed'))
      return 'missing';
    throw error;
  }
}
