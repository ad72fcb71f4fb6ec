import { bareProviderId } from '../../gateway/endpoints/models.js';
import { ServiceError } from '../../gateway/errors.js';
import { UserError } from '../../lib/user-error.js';
import type { ToolContext } from '../define.js';
import { configuredModel, defaultModel, modelsFor } from '../models/default-models.js';

export type WebKind = 'search' | 'fetch';

/** The provider a call uses, and the setting that named it, if one did. */
export interface WebProvider {
  id: string;
  /** GATEWAY_SEARCH_MODEL or GATEWAY_FETCH_MODEL when the id is theirs; null for the call's own or the gateway's first. */
  setting: string | null;
}

/**
 * Which provider serves web search or fetch: the call's `provider`, then the setting, then the
 * first one the service lists at /v1/models/web. Refused when there is none.
 */
export async function resolveWebProvider(
  kind: WebKind,
  explicit: string | undefined,
  ctx: ToolContext,
): Promise<WebProvider> {
  if (explicit) return { id: bareProviderId(explicit, kind), setting: null };
  // Asked on every call: a configured provider is answered without building the full choice.
  const configured = configuredModel(kind, ctx.runtime.config);
  if (configured) return { id: configured.id, setting: configured.setting };
  const { id } = await defaultModel(kind, ctx.runtime, ctx.signal);
  if (id) return { id, setting: null };
  const variable = kind === 'search' ? 'GATEWAY_SEARCH_MODEL' : 'GATEWAY_FETCH_MODEL';
  const example = kind === 'search' ? 'tavily' : 'jina-reader';
  throw new UserError(
    `No web ${kind} provider is available: the service lists none at /v1/models/web. ` +
      `Set ${variable} (for example ${variable}=${example}), pass \`provider\`, or add a web ${kind} provider to the gateway.`,
  );
}

/** How 9router refuses a provider it does not have (400), or one that does not do this kind. */
const NOT_A_PROVIDER = /\bunknown provider\b|\bdoes not support web (search|fetch)\b/i;
/** More providers than this are counted, not named. */
const MAX_NAMED = 12;

/**
 * Runs the call to `provider`; when the gateway refuses the provider itself, throws the refusal
 * with the providers it lists at /v1/models/web (any other failure is thrown as it came).
 */
export async function withProviderNamed<T>(
  kind: WebKind,
  provider: WebProvider,
  ctx: ToolContext,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw (await providerRefusal(kind, provider, error, ctx)) ?? error;
  }
}

async function providerRefusal(
  kind: WebKind,
  provider: WebProvider,
  error: unknown,
  ctx: ToolContext,
): Promise<UserError | null> {
  if (!(error instanceof ServiceError) || error.kind !== 'http' || (error.status ?? 0) >= 500) return null;
  const said = error.serviceMessage;
  if (!said || !NOT_A_PROVIDER.test(said)) return null;
  // The list is free and cached; a gateway that cannot list leaves its own answer to say it.
  const listed = await modelsFor(kind, ctx.runtime, ctx.signal).catch(() => undefined);
  if (listed === undefined) return null;
  const ids = (listed ?? []).map((m) => m.id);
  if (ids.includes(provider.id)) return null;
  const what = `web ${kind}`;
  const named = provider.setting ? `, which ${provider.setting} names` : '';
  const head = `Web ${kind} refused: the gateway has no ${what} provider "${provider.id}"${named} (it said: ${said}).`;
  if (ids.length === 0)
    return new UserError(`${head} It lists none at /v1/models/web: add a ${what} provider to the gateway.`);
  const them = ids.length === 1 ? 'it' : 'one of them';
  const fix = provider.setting
    ? `set ${provider.setting} to ${them}, or pass \`provider\`.`
    : `pass ${them} as \`provider\`, or leave \`provider\` out for the default.`;
  return new UserError(`${head} It lists ${namedList(ids)}: ${fix}`);
}

/** "tavily", "tavily and exa", "a, b and c", or the first few "and 9 more". */
function namedList(ids: readonly string[]): string {
  if (ids.length > MAX_NAMED)
    return `${ids.slice(0, MAX_NAMED).join(', ')} and ${ids.length - MAX_NAMED} more`;
  return ids.length === 1 ? (ids[0] ?? '') : `${ids.slice(0, -1).join(', ')} and ${ids.at(-1)}`;
}
