import { afterAll, afterEach, beforeAll } from 'vitest';
import { type ReferenceService, startReferenceService } from '../reference-service/index.js';
import { type Connected, connectInMemory } from './harness.js';

export interface Gateway {
  /** The reference service the server talks to. */
  service: ReferenceService;
  /** An SDK client connected, in memory, to a server pointed at `service`. */
  conn: Connected;
}

export interface GatewayOptions {
  /** The key the service expects and the server sends (default: the service's own). */
  apiKey?: string;
  /** More server settings; a function is called once the service runs (e.g. to make a CWD). */
  env?: Record<string, string> | (() => Record<string, string>);
  /** List the tools first, so that the client validates every structuredContent against its schema. */
  listTools?: boolean;
}

/**
 * The usual set-up of a test file: the reference service and an in-memory server connected to
 * it, started before the file's tests and closed after them. After each test the service is as it
 * started (no faults, zero counters, default model lists and video timing) and the server has
 * forgotten the model lists it cached.
 */
export function useGateway(options: GatewayOptions = {}): Gateway {
  const gateway = {} as Gateway;
  beforeAll(async () => {
    gateway.service = await startReferenceService(options.apiKey ? { apiKey: options.apiKey } : {});
    const env = typeof options.env === 'function' ? options.env() : options.env;
    gateway.conn = await connectInMemory({
      GATEWAY_BASE_URL: gateway.service.url,
      GATEWAY_API_KEY: gateway.service.apiKey,
      ...env,
    });
    if (options.listTools) await gateway.conn.client.listTools();
  });
  afterAll(async () => {
    await gateway.conn?.close();
    await gateway.service?.close();
  });
  afterEach(() => {
    gateway.service.reset();
    gateway.conn.runtime.service.catalog.clear();
  });
  return gateway;
}

export interface ReferenceSetup {
  /** The reference service, running for the whole file. */
  service: ReferenceService;
  /** The settings that point a server at it: pass them (plus more) to any way of starting one. */
  env: Record<string, string>;
}

/**
 * The reference service alone, for files that start their own servers (in memory, over stdio or
 * HTTP) with settings of their own.
 */
export function useReferenceService(): ReferenceSetup {
  const setup = {} as ReferenceSetup;
  beforeAll(async () => {
    setup.service = await startReferenceService();
    setup.env = { GATEWAY_BASE_URL: setup.service.url, GATEWAY_API_KEY: setup.service.apiKey };
  });
  afterAll(async () => {
    await setup.service?.close();
  });
  return setup;
}
