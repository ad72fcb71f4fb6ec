import type { Config } from '../config/config.js';
import { VERSION } from '../version.js';
import { ServiceClient } from './client.js';
import { ModelCatalog } from './endpoints/models.js';

/** The service client and the shared model catalog, one pair per process. */
export interface Service {
  client: ServiceClient;
  catalog: ModelCatalog;
}

export function createService(
  config: Config,
  scrub: (text: string) => string,
  secrets: readonly string[] = [],
): Service {
  const client = new ServiceClient({
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    timeoutMs: config.timeoutMs,
    maxRetries: config.maxRetries,
    scrub,
    secrets,
    userAgent: `gateway-tools-mcp/${VERSION}`,
    allowPrivateUrls: config.allowPrivateUrls,
    proxy: config.proxy,
  });
  return { client, catalog: new ModelCatalog(client) };
}
