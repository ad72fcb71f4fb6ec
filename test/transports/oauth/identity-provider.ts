// A real OpenID provider for the OAuth tests: oidc-provider on 127.0.0.1, issuing JWT access
// tokens (ES256) for the resource a client names (RFC 8707), and opaque ones to one client, for
// introspection. Its consent is automatic: the interaction page grants what was asked, as the
// account the test named, so a real authorization-code flow (PKCE) runs with no browser.
// The test holds the provider's private key, to sign tokens that are right in all but one respect.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import Provider from 'oidc-provider';

export const SCOPES = ['search', 'fetch', 'video', 'audio', 'models'] as const;

export const MACHINE = { id: 'build-agent', secret: 'machine-secret-0123456789abcdef' };
/** Its access tokens are opaque: the server has to introspect them. */
export const OPAQUE_MACHINE = { id: 'opaque-agent', secret: 'opaque-secret-0123456789abcdef' };
/** The service's own client, which introspects opaque tokens. */
export const INTROSPECTOR = { id: 'gateway-tools-mcp', secret: 'introspector-secret-0123456789ab' };
/** A public client (a coding agent on someone's laptop): authorization code with PKCE. */
export const AGENT = { id: 'coding-agent', redirectUri: 'http://127.0.0.1:8976/callback' };

export interface IdentityProvider {
  issuer: string;
  /** Signs a token with the provider's own key: valid unless `claims` says otherwise. */
  sign(claims: JWTPayload, header?: { alg?: string; kid?: string }): Promise<string>;
  /** A client-credentials access token of `client` for `resource`. */
  machineToken(resource: string, scope: string, client?: { id: string; secret: string }): Promise<string>;
  /**
   * Follows an authorization URL as `account`'s browser would, through login and consent, to the
   * redirect back to the client; gives that redirect's query (code, state, iss).
   */
  approve(authorizationUrl: URL, account: string): Promise<URLSearchParams>;
  close(): Promise<void>;
}

export async function startIdentityProvider(): Promise<IdentityProvider> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const signingJwk: JWK = { ...(await exportJWK(privateKey)), kid: 'idp-key-1', alg: 'ES256', use: 'sig' };
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const http = createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    jwks: { keys: [signingJwk] },
    // Its one key is an EC key.
    clientDefaults: { id_token_signed_response_alg: 'ES256', grant_types: [], response_types: [] },
    clients: [
      {
        client_id: MACHINE.id,
        client_secret: MACHINE.secret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
      {
        client_id: OPAQUE_MACHINE.id,
        client_secret: OPAQUE_MACHINE.secret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
      {
        client_id: INTROSPECTOR.id,
        client_secret: INTROSPECTOR.secret,
        grant_types: [],
        response_types: [],
        redirect_uris: [],
      },
      {
        client_id: AGENT.id,
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [AGENT.redirectUri],
      },
    ],
    // The tool families' scopes belong to the resource (getResourceServerInfo), not to OpenID.
    scopes: ['openid', 'offline_access'],
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource, client) => ({
          scope: SCOPES.join(' '),
          audience: resource,
          accessTokenTTL: 300,
          ...(client.clientId === OPAQUE_MACHINE.id
            ? { accessTokenFormat: 'opaque' as const }
            : { accessTokenFormat: 'jwt' as const, jwt: { sign: { alg: 'ES256' } } }),
        }),
      },
    },
  });
  // The account the next interaction logs in as (the test's "user at the browser").
  let nextAccount = 'nobody';
  const callback = provider.callback();
  handle = (req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      void grantEverythingAsked(provider, req, res, nextAccount).catch((error: unknown) => {
        res.writeHead(500).end(String(error));
      });
      return;
    }
    callback(req, res);
  };

  return {
    issuer,
    sign: (claims, header = {}) =>
      new SignJWT({
        iss: issuer,
        sub: 'forger',
        client_id: MACHINE.id,
        scope: SCOPES.join(' '),
        iat: Math.floor(Date.now() / 1000),
        exp: Math.floor(Date.now() / 1000) + 300,
        ...claims,
      })
        .setProtectedHeader({ alg: header.alg ?? 'ES256', kid: header.kid ?? 'idp-key-1', typ: 'at+jwt' })
        .sign(privateKey),
    async machineToken(resource, scope, client = MACHINE) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (!body.access_token) throw new Error(`no token: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async approve(authorizationUrl, account) {
      nextAccount = account;
      const cookies = new Map<string, string>();
      let url = authorizationUrl;
      for (let hop = 0; hop < 10; hop++) {
        const response = await fetch(url, {
          redirect: 'manual',
          headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
        });
        for (const line of response.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const at = pair?.indexOf('=') ?? -1;
          if (pair && at > 0) cookies.set(pair.slice(0, at), pair.slice(at + 1));
        }
        const location = response.headers.get('location');
        await response.body?.cancel();
        if (!location) throw new Error(`the authorization flow stopped at ${url} (HTTP ${response.status})`);
        const next = new URL(location, url);
        if (next.href.startsWith(AGENT.redirectUri)) return next.searchParams;
        url = next;
      }
      throw new Error('the authorization flow did not come back to the client');
    },
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The consent page, answered at once: log in as `account`, grant every scope asked, for every resource asked. */
async function grantEverythingAsked(
  provider: Provider,
  req: IncomingMessage,
  res: ServerResponse,
  account: string,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const params = details.params as { client_id: string; scope?: string; resource?: string | string[] };
  const accountId = details.session?.accountId ?? account;
  const grant = details.grantId
    ? ((await provider.Grant.find(details.grantId)) ??
      new provider.Grant({ accountId, clientId: params.client_id }))
    : new provider.Grant({ accountId, clientId: params.client_id });
  const asked = (params.scope ?? '').split(' ').filter(Boolean);
  const oidc = asked.filter((s) => s === 'openid' || s === 'offline_access');
  if (oidc.length > 0) grant.addOIDCScope(oidc.join(' '));
  const resourceScopes = asked.filter((s) => s !== 'openid' && s !== 'offline_access').join(' ');
  for (const resource of [params.resource ?? []].flat()) grant.addResourceScope(resource, resourceScopes);
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}
