// doctor --live: one real web search and one real web fetch, sent by the tools themselves, so
// through the providers they would use: each billed by its provider and recorded in the ledger
// like any billed call (limits and all). A provider account the gateway lists but its provider
// refuses (a revoked key, no credit) shows here, with the provider's own reason, before an agent
// meets it.

import { z } from 'zod';
import { fromSettings } from '../files/workspace.js';
import { ServiceError } from '../gateway/errors.js';
import { providerUnreachable, readUpstreamFailure } from '../gateway/upstream-failure.js';
import type { Runtime } from '../runtime.js';
import {
  type AnyToolDefinition,
  localPrincipal,
  STARTED_BY_THE_USER,
  type ToolContext,
} from '../tools/define.js';
import { FailedStep, failureSentence, MaybeBilled } from '../tools/results.js';
import { resolveWebProvider } from '../tools/web/providers.js';
import { webFetch } from '../tools/web/web-fetch.js';
import { webSearch } from '../tools/web/web-search.js';
import { type Check, fail, ok } from './check.js';

/** What doctor --live sends, said before it runs. */
export const LIVE_NOTICE =
  'doctor --live sends one web search and one web fetch through the providers the tools use: each is billed by its provider and recorded in the ledger of billed calls.';

const LIVE_CALLS: readonly {
  id: string;
  kind: 'search' | 'fetch';
  label: string;
  tool: AnyToolDefinition;
  args: Record<string, unknown>;
}[] = [
  {
    id: 'live_search',
    kind: 'search',
    label: 'Live web search',
    tool: webSearch,
    args: { query: 'model context protocol', max_results: 1 },
  },
  {
    id: 'live_fetch',
    kind: 'fetch',
    label: 'Live web fetch',
    tool: webFetch,
    args: { url: 'https://example.com/', max_length: 200 },
  },
];

export async function checkLive(runtime: Runtime): Promise<Check[]> {
  const checks: Check[] = [];
  for (const call of LIVE_CALLS) {
    try {
      const ctx = contextFor(runtime);
      // The provider the tool picks, named as the tool will: the setting's, else the first listed.
      const provider = await resolveWebProvider(call.kind, undefined, ctx);
      const args = z.object(call.tool.inputSchema).parse({ ...call.args, provider: provider.id });
      await call.tool.run(args, ctx);
      checks.push(
        ok(call.id, true, `${call.label}: ${provider.id} answered (billed by it, recorded in the ledger)`),
      );
    } catch (error) {
      checks.push(fail(call.id, true, failureSentence(error, runtime.scrub, call.label), fixFor(error)));
    }
  }
  return checks;
}

const OTHER_PROVIDER = 'or choose another provider (GATEWAY_SEARCH_MODEL, GATEWAY_FETCH_MODEL).';

/**
 * The fix for a live call that failed: a provider the gateway could not reach is the network's
 * doing (the gateway machine's connection, proxy, firewall or DNS), where fixing its key would
 * change nothing; anything else is the provider's account.
 */
function fixFor(error: unknown): string {
  const cause = error instanceof MaybeBilled || error instanceof FailedStep ? error.cause : error;
  const failure =
    cause instanceof ServiceError && cause.serviceMessage
      ? readUpstreamFailure(cause.serviceMessage, cause.model)
      : undefined;
  if (failure && providerUnreachable(failure)) {
    return `The gateway could not reach ${failure.provider}: check the network of the gateway's machine (its connection, proxy, firewall or DNS), then run doctor --live again, ${OTHER_PROVIDER}`;
  }
  return `Fix the provider's account in the gateway's dashboard (its key, credit or plan), ${OTHER_PROVIDER}`;
}

/** What a tool gets from a call, for a call made by doctor: no client, no progress, no files. */
function contextFor(runtime: Runtime): ToolContext {
  return {
    runtime,
    principal: localPrincipal(runtime.config),
    signal: new AbortController().signal,
    progress: async () => {},
    toolName: (base) => base,
    log: runtime.log,
    workspace: async () => fromSettings(runtime.config),
    savedFile: () => {
      throw new Error('doctor --live saves no file');
    },
    approval: STARTED_BY_THE_USER,
  };
}
