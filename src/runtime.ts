import type { Config } from './config.js';
import { createLogger, type Logger, secretScrubber } from './log.js';
import { createService, type Service } from './service/index.js';
import { PageCache } from './tools/support/page-cache.js';
import { TranscriptCache } from './tools/support/transcript-cache.js';

/**
 * What lives once per process and is shared by every MCP session: settings, the service client,
 * caches and the logger. A transport builds one Runtime and one McpServer per session from it.
 */
export interface Runtime {
  config: Config;
  service: Service;
  pages: PageCache;
  /** Finished transcriptions, so paging a long transcript does not transcribe (and pay) again. */
  transcripts: TranscriptCache;
  log: Logger;
  scrub: (text: string) => string;
}

export function createRuntime(config: Config): Runtime {
  const scrub = secretScrubber([config.apiKey, config.mcpToken]);
  return {
    config,
    service: createService(config, scrub),
    pages: new PageCache(),
    transcripts: new TranscriptCache(),
    log: createLogger(config.logLevel, scrub),
    scrub,
  };
}

export async function closeRuntime(runtime: Runtime): Promise<void> {
  await runtime.service.client.close();
}
