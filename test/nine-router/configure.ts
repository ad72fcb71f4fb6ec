// What the test gateway is configured with: an API key, one connection per upstream provider the
// tools reach (fake keys; the upstreams are fakes), two OpenAI-compatible provider nodes (a chat
// one and a Responses one) and a web search combo.
import type { Dashboard } from './dashboard.js';

export interface GatewaySetup {
  apiKey: string;
  /** The fake API key each provider connection sends upstream, by provider. */
  providerKeys: Record<string, string>;
}

const KEYED_PROVIDERS = [
  'tavily',
  'exa',
  'serper',
  'brave-search',
  'jina-reader',
  'firecrawl',
  'xai',
  'openai',
  'groq',
];

export async function configureGateway(dashboard: Dashboard, upstreamUrl: string): Promise<GatewaySetup> {
  const { key } = await dashboard.call<{ key: string }>('POST', '/api/keys', { name: 'tests' });
  const providerKeys: Record<string, string> = {};
  const connect = async (provider: string, name: string, providerSpecificData?: Record<string, unknown>) => {
    providerKeys[name] = `fake-${name}-key`;
    await dashboard.call('POST', '/api/providers', {
      provider,
      apiKey: providerKeys[name],
      name,
      providerSpecificData,
    });
  };
  for (const provider of KEYED_PROVIDERS) await connect(provider, provider);
  await connect('selfhosted-tts', 'selfhosted-tts', { baseUrl: `${upstreamUrl}/tts` });
  await connect('selfhosted-stt', 'selfhosted-stt', {
    baseUrl: `${upstreamUrl}/stt/v1/audio/transcriptions`,
  });
  for (const [prefix, apiType] of [
    ['fakechat', 'chat'],
    ['fakeresp', 'responses'],
  ] as const) {
    const { node } = await dashboard.call<{ node: { id: string } }>('POST', '/api/provider-nodes', {
      name: prefix,
      prefix,
      apiType,
      baseUrl: `${upstreamUrl}/${prefix}/v1`,
    });
    await connect(node.id, prefix);
  }
  await dashboard.call('POST', '/api/combos', {
    name: 'search-combo',
    kind: 'webSearch',
    models: ['tavily', 'exa'],
  });
  return { apiKey: key, providerKeys };
}
