import type { ServiceClient } from '../client.js';
import { abortable } from '../deadline.js';
import { ServiceError } from '../errors.js';
import { asArray, asId, asObject, asPrintable } from '../normalize.js';

export type ModelListKind = 'chat' | 'tts' | 'stt' | 'image' | 'embedding' | 'image-to-text' | 'web';

export interface ModelEntry {
  id: string;
  owned_by: string | null;
  /** For `web` entries: webSearch or webFetch. */
  kind: string | null;
}

/** Where the service lists one kind of model. */
export function modelListPath(kind: ModelListKind): string {
  return kind === 'chat' ? '/v1/models' : `/v1/models/${kind}`;
}

/** Lists one kind of model; `null` when the service has no such list (404). */
export async function listModels(
  client: ServiceClient,
  kind: ModelListKind,
  signal?: AbortSignal,
): Promise<ModelEntry[] | null> {
  try {
    const { data } = await client.json<unknown>({
      method: 'GET',
      path: modelListPath(kind),
      signal,
      retry: 'safe',
      controlsKept: true,
    });
    return asArray(asObject(data).data).flatMap((raw) => {
      const m = asObject(raw);
      // A listed id is shown to the agent and to a terminal (doctor): one with control characters
      // is dropped, not cleaned, since no cleaned form is what the gateway would accept.
      const id = asId(m.id);
      return id ? [{ id, owned_by: asPrintable(m.owned_by) ?? null, kind: asPrintable(m.kind) ?? null }] : [];
    });
  } catch (error) {
    if (!(error instanceof ServiceError) || error.status !== 404) throw error;
    // A gateway without this list answers 404 (a web framework's own page, for a route it lacks);
    // another server at the gateway's address does so for every list, the main one too.
    if (error.notGatewayLike && (kind === 'chat' || (await notAGateway(client, signal)))) throw error;
    return null;
  }
}

/** Whether the gateway's address fails to list chat models the way a gateway does. */
async function notAGateway(client: ServiceClient, signal?: AbortSignal): Promise<boolean> {
  return listModels(client, 'chat', signal).then(
    () => false,
    (error: unknown) => error instanceof ServiceError && error.notGatewayLike,
  );
}

/** Search and fetch take a bare provider id: `tavily/search` -> `tavily`. */
export function bareProviderId(id: string, suffix: 'search' | 'fetch'): string {
  return id.endsWith(`/${suffix}`) ? id.slice(0, -(suffix.length + 1)) : id;
}

const CATALOG_TTL_MS = 5 * 60_000;

/**
 * Model lists cached for a few minutes, shared by every session of the process. Failed lookups
 * are not cached, so a service that comes up later is seen on the next call. A lookup is shared
 * by everyone who asks while it runs, so it belongs to none of them: a caller that cancels stops
 * waiting, and the others still get the list (the client's timeout bounds the lookup).
 */
export class ModelCatalog {
  private readonly cache = new Map<ModelListKind, { at: number; list: Promise<ModelEntry[] | null> }>();

  constructor(private readonly client: ServiceClient) {}

  list(kind: ModelListKind, signal?: AbortSignal): Promise<ModelEntry[] | null> {
    const hit = this.cache.get(kind);
    const list = hit && Date.now() - hit.at < CATALOG_TTL_MS ? hit.list : this.lookUp(kind);
    return signal ? abortable(list, signal) : list;
  }

  clear(): void {
    this.cache.clear();
  }

  private lookUp(kind: ModelListKind): Promise<ModelEntry[] | null> {
    const list = listModels(this.client, kind);
    this.cache.set(kind, { at: Date.now(), list });
    list.catch(() => {
      if (this.cache.get(kind)?.list === list) this.cache.delete(kind);
    });
    return list;
  }
}
