// Vitest global set-up of the `real-gateway` project: starts the real gateway once for the run
// (installing 9router first if this machine has no copy) and stops it by PID afterwards. If it
// cannot start, the run fails here with one line saying why; the suite is never skipped.
import type { TestProject } from 'vitest/node';
import { startTestGateway, type TestGateway } from './start.js';

export interface RealGatewayInfo {
  version: string;
  url: string;
  apiKey: string;
  upstreamUrl: string;
  dashboardCookie: string;
  providerKeys: Record<string, string>;
  /** The gateway's process, leader of its process group (test/process/lifetime.test.ts). */
  pid: number;
}

declare module 'vitest' {
  export interface ProvidedContext {
    realGateway: RealGatewayInfo;
  }
}

let gateway: TestGateway | undefined;

export async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  try {
    gateway = await startTestGateway();
  } catch (error) {
    const line = `real gateway: ${(error as Error).message}`;
    console.error(line);
    throw new Error(line);
  }
  const { version, url, apiKey, upstreamUrl, dashboardCookie, providerKeys, pid } = gateway;
  console.log(`real gateway: 9router ${version} at ${url} (pid ${pid}), ready in ${Date.now() - started} ms`);
  project.provide('realGateway', { version, url, apiKey, upstreamUrl, dashboardCookie, providerKeys, pid });
}

export async function teardown(): Promise<void> {
  if (!gateway) return;
  const refused = gateway.refused;
  await gateway.stop();
  if (refused.length)
    throw new Error(`real gateway: 9router tried to reach hosts outside the test: ${refused.join(', ')}`);
}
