// Where two observations of the same request differ, each difference named by a path that the
// divergence list can refer to: `status`, `header content-type`, `header retry-after`,
// `header x-9router-connection-id`, `body` (its kind), `body.<json path>`, `events` (the SSE event
// types in order), `event <type>.<json path>`, `[DONE]`.
import type { Observation, ObservedBody } from './exchange.js';
import { diffShapes } from './shape.js';

export interface Divergence {
  path: string;
  real: string;
  reference: string;
}

const presence = (present: boolean) => (present ? 'present' : 'absent');

function prefixed(prefix: string, path: string): string {
  if (!path) return prefix;
  return path.startsWith('[]') ? `${prefix}${path}` : `${prefix}.${path}`;
}

function compareBodies(real: ObservedBody, reference: ObservedBody): Divergence[] {
  if (real.kind !== reference.kind) return [{ path: 'body', real: real.kind, reference: reference.kind }];
  if (real.kind === 'json' && reference.kind === 'json') {
    return diffShapes(real.shape, reference.shape).map((d) => ({ ...d, path: prefixed('body', d.path) }));
  }
  if (real.kind !== 'sse' || reference.kind !== 'sse') return [];
  const out: Divergence[] = [];
  const realTypes = real.types.join(', ');
  const referenceTypes = reference.types.join(', ');
  if (realTypes !== referenceTypes) out.push({ path: 'events', real: realTypes, reference: referenceTypes });
  for (const [type, shape] of real.data) {
    const other = reference.data.get(type);
    if (!other) continue;
    for (const d of diffShapes(shape, other)) out.push({ ...d, path: prefixed(`event ${type}`, d.path) });
  }
  if (real.done !== reference.done) {
    out.push({ path: '[DONE]', real: presence(real.done), reference: presence(reference.done) });
  }
  return out;
}

export function compareObservations(real: Observation, reference: Observation): Divergence[] {
  const out: Divergence[] = [];
  if (real.status !== reference.status) {
    out.push({ path: 'status', real: String(real.status), reference: String(reference.status) });
  }
  if (real.contentType !== reference.contentType) {
    out.push({ path: 'header content-type', real: real.contentType, reference: reference.contentType });
  }
  if (real.retryAfter !== reference.retryAfter) {
    out.push({
      path: 'header retry-after',
      real: presence(real.retryAfter),
      reference: presence(reference.retryAfter),
    });
  }
  if (real.connectionId !== reference.connectionId) {
    out.push({
      path: 'header x-9router-connection-id',
      real: presence(real.connectionId),
      reference: presence(reference.connectionId),
    });
  }
  return [...out, ...compareBodies(real.body, reference.body)];
}
