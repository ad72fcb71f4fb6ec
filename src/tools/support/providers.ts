import { bareProviderId } from '../../service/models.js';
import type { ToolContext } from '../types.js';

export type WebKind = 'search' | 'fetch';

/**
 * Which provider serves web search or fetch: the call's `provider`, then the setting, then the
 * first one the service lists at /v1/models/web. Null when there is none.
 */
export async function resolveWebProvider(
  kind: WebKind,
  explicit: string | undefined,
  ctx: ToolContext,
): Promise<string | null> {
  const configured =
    explicit ?? (kind === 'search' ? ctx.runtime.config.searchModel : ctx.runtime.config.fetchModel);
  if (configured) return bareProviderId(configured, kind);
  return ctx.runtime.service.catalog.webProvider(kind, ctx.signal);
}

export function noProviderMessage(kind: WebKind): string {
  const variable = kind === 'search' ? 'GATEWAY_SEARCH_MODEL' : 'GATEWAY_FETCH_MODEL';
  const example = kind === 'search' ? 'tavily' : 'jina-reader';
  return (
    `No web ${kind} provider is available: the service lists none at /v1/models/web. ` +
    `Set ${variable} (for example ${variable}=${example}), pass \`provider\`, or add a web ${kind} provider to the gateway.`
  );
}
