import { bareProviderId } from '../../gateway/endpoints/models.js';
import type { ToolContext } from '../define.js';
import { configuredModel, defaultModel } from '../models/default-models.js';
import { UserError } from '../results.js';

export type WebKind = 'search' | 'fetch';

/**
 * Which provider serves web search or fetch: the call's `provider`, then the setting, then the
 * first one the service lists at /v1/models/web. Refused when there is none.
 */
export async function resolveWebProvider(
  kind: WebKind,
  explicit: string | undefined,
  ctx: ToolContext,
): Promise<string> {
  if (explicit) return bareProviderId(explicit, kind);
  // Asked on every call: a configured provider is answered without building the full choice.
  const configured = configuredModel(kind, ctx.runtime.config);
  if (configured) return configured.id;
  const discovered = (await defaultModel(kind, ctx.runtime, ctx.signal)).id;
  if (discovered) return discovered;
  const variable = kind === 'search' ? 'GATEWAY_SEARCH_MODEL' : 'GATEWAY_FETCH_MODEL';
  const example = kind === 'search' ? 'tavily' : 'jina-reader';
  throw new UserError(
    `No web ${kind} provider is available: the service lists none at /v1/models/web. ` +
      `Set ${variable} (for example ${variable}=${example}), pass \`provider\`, or add a web ${kind} provider to the gateway.`,
  );
}
