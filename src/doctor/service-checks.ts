// The doctor's service checks: reachable, key accepted, and the model each capability uses.

import { checkHealth, KEY_PROBE, probeKey } from '../gateway/endpoints/health.js';
import { ServiceError } from '../gateway/errors.js';
import type { Runtime } from '../runtime.js';
import { describeSpeechDefault, resolveSpeechId } from '../tools/audio/speech-ids.js';
import {
  defaultModel,
  listPath,
  MODEL_SETTING,
  type ModelRole,
  modelsFor,
} from '../tools/models/default-models.js';
import { type Check, describe, fail, ok, warn } from './check.js';

const UNREACHABLE_FIX =
  'Start the gateway (9router listens on http://127.0.0.1:20128 by default) or set GATEWAY_BASE_URL to its address.';

/** Reachable means any HTTP answer: /api/health first, else /v1/models (other gateways). */
export async function checkService(runtime: Runtime, checks: Check[]): Promise<boolean> {
  const { client } = runtime.service;
  const base = client.baseUrl;
  try {
    const health = await checkHealth(client);
    if (health === 'ok') {
      checks.push(ok('service', true, `Service reachable at ${base} (GET /api/health answered ok)`));
      return true;
    }
    await runtime.service.catalog.list('chat').catch((error: unknown) => {
      if (error instanceof ServiceError && error.kind === 'http') return null; // an answer is an answer
      throw error;
    });
    checks.push(
      ok('service', true, `Service reachable at ${base} (it has no /api/health; /v1/models answered)`),
    );
    return true;
  } catch (error) {
    if (error instanceof ServiceError && error.kind === 'http') {
      const message = `Service at ${base} answered GET /api/health with an error: ${error.message}`;
      checks.push(
        warn(
          'service',
          true,
          message,
          'Check the gateway’s own logs; the checks below show whether the tools can still work.',
        ),
      );
      return true;
    }
    if (error instanceof ServiceError && error.kind === 'malformed') {
      const message = `Something answers at ${base}, but not like the gateway: ${error.message}`;
      checks.push(fail('service', true, message, 'Check that GATEWAY_BASE_URL is the gateway’s address.'));
      return false;
    }
    // The client's own message already reads "Cannot reach the service at <url> (ECONNREFUSED)".
    const message = describe(error);
    const text = message.startsWith('Cannot reach')
      ? message
      : `Cannot reach the service at ${base}: ${message}`;
    checks.push(fail('service', true, text, UNREACHABLE_FIX));
    return false;
  }
}

const KEY_FIX =
  'Set GATEWAY_API_KEY (or GATEWAY_API_KEY_FILE) to a key the gateway accepts (see its dashboard).';

/**
 * The key is checked where the service authenticates and nothing is spent (see probeKey): the
 * model lists answer without a key, so they cannot say whether it is right.
 */
export async function checkKey(runtime: Runtime, checks: Check[]): Promise<boolean> {
  const keySet = runtime.service.client.hasApiKey;
  try {
    const answer = await probeKey(runtime.service.client);
    if (answer.verdict === 'accepted') {
      checks.push(
        ok(
          'api_key',
          true,
          keySet
            ? `API key accepted (${KEY_PROBE} with an empty query: authenticated, refused before any provider was asked)`
            : `No API key set, and the service does not ask for one (${KEY_PROBE} answered without one)`,
        ),
      );
      return true;
    }
    const status = answer.error.status;
    if (answer.verdict === 'refused') {
      const what = keySet
        ? `The service refused the API key (${status})`
        : `No API key set, and the service requires one (${status})`;
      checks.push(fail('api_key', true, `${what}: ${describe(answer.error)}`, KEY_FIX));
      return false;
    }
    const message = `Could not verify the API key: ${KEY_PROBE} answered ${status} (${describe(answer.error)})`;
    const fix = 'Nothing to do if tool calls work; otherwise check GATEWAY_BASE_URL points at the gateway.';
    checks.push(warn('api_key', true, message, fix));
    return true;
  } catch (error) {
    checks.push(
      fail(
        'api_key',
        true,
        `Could not check the API key: ${describe(error)}`,
        'Run doctor again; if it persists, check the gateway.',
      ),
    );
    return false;
  }
}

export async function checkRole(
  runtime: Runtime,
  role: ModelRole,
  label: string,
  required: boolean,
): Promise<Check> {
  const capability = role === 'summary' ? 'chat' : role;
  const setting = MODEL_SETTING[role];
  try {
    const choice = await defaultModel(role, runtime);
    if (!choice.id) {
      const where = listPath(capability);
      const why = choice.listed === null ? `the gateway has no ${where} (404)` : `${where} lists none`;
      const fix =
        role === 'summary'
          ? `Set ${setting} or ${MODEL_SETTING.chat} to a small chat model.`
          : `Set ${setting}${role === 'search' ? ' (e.g. tavily)' : role === 'fetch' ? ' (e.g. jina-reader)' : ''}, or add such a model to the gateway.`;
      return (required ? fail : warn)(role, required, `${label}: no model (${why})`, fix);
    }
    if (choice.source === 'discovered') {
      const shown = role === 'speech' ? await speechDefault(runtime, choice.id) : choice.id;
      return ok(
        role,
        required,
        `${label}: ${shown} (discovered at ${listPath(capability)}; ${choice.listed} listed)`,
      );
    }
    if (choice.source === 'built-in') {
      return ok(
        role,
        required,
        `${label}: ${choice.id} (built-in default; the gateway does not list video models)`,
      );
    }
    // A configured model is used as is; say so when the service's list does not have it.
    const listed = capability === 'video' ? null : await modelsFor(capability, runtime).catch(() => null);
    const ids = listed?.map((m) => m.id) ?? null;
    if (ids && !isListed(role, choice.id, ids)) {
      const message = `${label}: ${choice.id} (from ${choice.setting}), but ${listPath(capability)} does not list it`;
      const fix =
        role === 'speech'
          ? `audio_speech refuses it without \`model\`: set ${setting} to a listed provider/model, optionally with /voice (list_models speech).`
          : `Fine for a combo or alias; otherwise pick one the gateway lists (npx gateway-tools-mcp doctor --json, or list_models).`;
      return warn(role, required, message, fix);
    }
    const shown = role === 'speech' ? describeSpeechDefault(choice.id, ids) : choice.id;
    return ok(role, required, `${label}: ${shown} (from ${choice.setting})`);
  } catch (error) {
    const message = `${label}: could not read ${listPath(capability)}: ${describe(error)}`;
    return (required ? fail : warn)(role, required, message, `Set ${setting} to skip discovery.`);
  }
}

/** Speech ids are listed as provider/model: a configured provider/model/voice is listed too. */
function isListed(role: ModelRole, id: string, ids: readonly string[]): boolean {
  return role === 'speech' ? resolveSpeechId(id, undefined, ids) !== null : ids.includes(id);
}

/** The discovered speech default with the voice it is sent with. */
async function speechDefault(runtime: Runtime, id: string): Promise<string> {
  const listed = await modelsFor('speech', runtime).catch(() => null);
  return describeSpeechDefault(id, listed?.map((m) => m.id) ?? null);
}
