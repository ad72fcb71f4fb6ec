// The routes doctor asks to tell what answers at the base URL: 9router's health check, the model
// list every gateway has, and a key probe that costs nothing.

import type { ServiceClient } from '../client.js';
import { ServiceError } from '../errors.js';

/** How a route answered a GET: what tells a gateway from another server that answers HTTP. */
export type RouteAnswer =
  | { kind: 'json'; body: unknown }
  | { kind: 'not-json' }
  | { kind: 'status'; error: ServiceError };

/** The routes a gateway is known by: 9router's health check, and the model list every gateway has. */
export const HEALTH_ROUTE = '/api/health';
export const MODELS_ROUTE = '/v1/models';

/**
 * GETs a route that needs no key and says how it answered. Throws the ServiceError when nothing
 * answered it (unreachable, timeout) or the answer was a redirect.
 */
export async function probeRoute(
  client: ServiceClient,
  path: string,
  signal?: AbortSignal,
): Promise<RouteAnswer> {
  try {
    const { data } = await client.json<unknown>({ method: 'GET', path, signal, retry: 'safe' });
    return { kind: 'json', body: data };
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    if (error.kind === 'http') return { kind: 'status', error };
    if (error.kind === 'malformed') return { kind: 'not-json' };
    throw error;
  }
}

/** 9router's health answer: `{"ok":true}`. */
export function isHealthy(answer: RouteAnswer): boolean {
  return answer.kind === 'json' && (answer.body as { ok?: unknown } | null)?.ok === true;
}

/** How many models a /v1/models answer lists, or null when it is no model list. */
export function modelsListed(answer: RouteAnswer): number | null {
  if (answer.kind !== 'json') return null;
  const data = (answer.body as { data?: unknown } | null)?.data;
  return Array.isArray(data) ? data.length : null;
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
