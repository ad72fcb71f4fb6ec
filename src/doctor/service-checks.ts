// The doctor's service checks: reachable, key accepted, and the model each capability uses.

import {
  HEALTH_ROUTE,
  isHealthy,
  KEY_PROBE,
  MODELS_ROUTE,
  modelsListed,
  probeKey,
  probeRoute,
  type RouteAnswer,
} from '../gateway/endpoints/health.js';
import { UNRESOLVED_CODES } from '../gateway/error-advice.js';
import { ServiceError } from '../gateway/errors.js';
import { GATEWAY_GUIDE_URL } from '../links.js';
import type { Runtime } from '../runtime.js';
import { describeSpeechDefault, resolveSpeechId, voiceAloneProviders } from '../tools/audio/speech-ids.js';
import {
  defaultModel,
  listPath,
  MODEL_SETTING,
  type ModelRole,
  modelsFor,
} from '../tools/models/default-models.js';
import { type Check, describe, fail, ok, warn } from './check.js';

const NINE_ROUTER_ADDRESS = '9router listens on http://127.0.0.1:20128 by default';

/** Whether a gateway answers at GATEWAY_BASE_URL; when not, why the checks that need one are skipped. */
export type ServiceVerdict = { accepted: true } | { accepted: false; why: string };

/**
 * A gateway is what answers like one: 9router's GET /api/health `{"ok":true}`, or, for other
 * gateways with the same API, a model list at GET /v1/models (or a demand for the key there).
 * Anything else that answers HTTP is named as not a gateway, with what it answered; the fix names
 * the gateway guide on the web (a path into npx's cache is no place to send a person).
 */
export async function checkService(runtime: Runtime, checks: Check[]): Promise<ServiceVerdict> {
  const { client } = runtime.service;
  const base = client.shownBaseUrl;
  const noGateway = `No gateway yet? ${GATEWAY_GUIDE_URL} shows how to set one up.`;
  try {
    const health = await probeRoute(client, HEALTH_ROUTE);
    if (isHealthy(health)) {
      checks.push(ok('service', true, `Service reachable at ${base} (GET ${HEALTH_ROUTE} answered ok)`));
      return { accepted: true };
    }
    const models = await probeRoute(client, MODELS_ROUTE);
    const listed = modelsListed(models);
    if (listed !== null) {
      checks.push(otherGateway(base, health, listed));
      return { accepted: true };
    }
    if (models.kind === 'status' && (models.error.status === 401 || models.error.status === 403)) {
      // Some gateways list their models only to a caller with a key: the key check says the rest.
      const message = `Service reachable at ${base} (GET ${MODELS_ROUTE} asks for a key: ${models.error.status})`;
      checks.push(ok('service', true, message));
      return { accepted: true };
    }
    const seen =
      seenAt(health, 'health') === seenAt(models, 'models')
        ? `GET ${HEALTH_ROUTE} and GET ${MODELS_ROUTE} ${seenAt(health, 'health')}`
        : `GET ${HEALTH_ROUTE} ${seenAt(health, 'health')} and GET ${MODELS_ROUTE} ${seenAt(models, 'models')}`;
    const message = `Something answers at ${base}, but it does not look like a 9router gateway: ${seen}`;
    const fix = `Set GATEWAY_BASE_URL to the gateway's address (${NINE_ROUTER_ADDRESS}). ${noGateway}`;
    checks.push(fail('service', true, message, fix));
    return { accepted: false, why: 'no gateway at GATEWAY_BASE_URL' };
  } catch (error) {
    if (error instanceof ServiceError && error.kind === 'redirect') {
      const fix =
        'Tools never follow a redirect from the gateway’s address, as the key would go along to wherever it points.';
      checks.push(fail('service', true, describe(error), fix));
      return { accepted: false, why: 'no gateway at GATEWAY_BASE_URL' };
    }
    // The client's own message already reads "Cannot reach the service at <url> (ECONNREFUSED)".
    const message = describe(error);
    const text = message.startsWith('Cannot reach')
      ? message
      : `Cannot reach the service at ${base}: ${message}`;
    const unresolved = error instanceof ServiceError && UNRESOLVED_CODES.has(error.code ?? '');
    const fix = unresolved
      ? `Check the host name in GATEWAY_BASE_URL (${NINE_ROUTER_ADDRESS}). ${noGateway}`
      : `Start the gateway (${NINE_ROUTER_ADDRESS}) or set GATEWAY_BASE_URL to its address. ${noGateway}`;
    checks.push(fail('service', true, text, fix));
    return { accepted: false, why: 'needs a reachable gateway' };
  }
}

/** A gateway that is not 9router, or a 9router whose health check failed: its model list answered. */
function otherGateway(base: string, health: RouteAnswer, listed: number): Check {
  const models = `${MODELS_ROUTE} answered with ${listed} model${listed === 1 ? '' : 's'}`;
  if (health.kind === 'status' && health.error.status !== 404) {
    return {
      id: 'service',
      status: 'warn',
      required: true,
      message: `Service at ${base} answered GET ${HEALTH_ROUTE} with ${health.error.status} (${describe(health.error)}), but ${models}`,
      fix: 'Check the gateway’s own logs; the checks below show whether the tools can still work.',
    };
  }
  const why =
    health.kind === 'status' ? `it has no ${HEALTH_ROUTE}` : `GET ${HEALTH_ROUTE} did not answer {"ok":true}`;
  return ok('service', true, `Service reachable at ${base} (${why}; ${models})`);
}

/** What a route answered, for a server that is not a gateway. */
function seenAt(answer: RouteAnswer, route: 'health' | 'models'): string {
  switch (answer.kind) {
    case 'status':
      return `answered ${answer.error.status}`;
    case 'not-json':
      return 'answered with a body that is not JSON';
    case 'json':
      return route === 'health' ? 'answered without {"ok":true}' : 'answered without a model list';
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
    // The gateway lists no video models: whether it has an account for one shows only when a
    // video is asked for. Not a ✓ for what was never seen.
    if (capability === 'video') {
      const from = choice.source === 'built-in' ? 'built-in default' : `from ${choice.setting}`;
      return warn(
        role,
        required,
        `${label}: ${choice.id} (${from}; listed, not proven: the gateway does not list video models)`,
        `Make sure the gateway has an account for ${choice.id.split('/')[0]} (its dashboard's providers); the first video_generate says if it has not.`,
      );
    }
    // A configured model is used as is; say so when the service's list does not have it.
    const listed = await modelsFor(capability, runtime).catch(() => null);
    const ids = listed?.map((m) => m.id) ?? null;
    if (ids && !isListed(role, choice.id, ids)) {
      const message = `${label}: ${choice.id} (from ${choice.setting}), but ${listPath(capability)} does not list it`;
      const fix =
        role === 'speech'
          ? `audio_speech refuses it without \`model\`: set ${setting} to a listed provider/model, optionally with /voice${voiceAloneSetting(ids)} (list_models speech).`
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

/** `, or to openai/<voice>` for the listed providers whose voice alone is an id. */
function voiceAloneSetting(ids: readonly string[]): string {
  const forms = voiceAloneProviders(ids).map((p) => `${p.provider}/<voice>`);
  return forms.length ? `, or to ${forms.join(' or ')}` : '';
}

/** The discovered speech default with the voice it is sent with. */
async function speechDefault(runtime: Runtime, id: string): Promise<string> {
  const listed = await modelsFor('speech', runtime).catch(() => null);
  return describeSpeechDefault(id, listed?.map((m) => m.id) ?? null);
}
