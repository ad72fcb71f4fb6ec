// Checks an OAuth access token for this service: a JWT against the issuer's published keys
// (jose), any other token through the issuer's introspection endpoint (RFC 7662). Either way the
// token must come from the configured issuer, name this service as its audience (RFC 8707) and
// carry an expiry; what it says becomes the SDK's AuthInfo, with the subject as the caller.

import { createHash } from 'node:crypto';
import {
  type AuthInfo,
  OAuthError,
  OAuthErrorCode,
  type OAuthTokenVerifier,
} from '@modelcontextprotocol/server';
import { createRemoteJWKSet, errors, type JWTPayload, jwtVerify } from 'jose';

/** Signatures by a key pair only: `none` and HMAC (a secret the issuer shares) are refused. */
const ASYMMETRIC = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];
/** Clocks of the issuer and this host may differ this much (seconds) for exp and nbf. */
const LEEWAY_SECONDS = 30;
const DISCOVERY_TIMEOUT_MS = 10_000;
/** An introspected token is asked about again after this long at most. */
const INTROSPECTION_CACHE_MS = 30_000;
const INTROSPECTION_CACHE_SIZE = 1_000;

export interface TokenSettings {
  /** GATEWAY_OAUTH_ISSUER, as configured. */
  issuer: string;
  /** The `aud` a token must contain. */
  audience: string;
  /** The RFC 8707 resource this service is (<GATEWAY_PUBLIC_URL>/mcp). */
  resource: string;
  clientId?: string;
  clientSecret?: string;
}

/** The parts of the issuer's metadata (RFC 8414 or OpenID Connect Discovery) this service reads. */
interface IssuerMetadata {
  issuer: string;
  jwks_uri?: string;
  introspection_endpoint?: string;
}

/** The issuer could not be asked (unreachable, bad metadata): the token is neither good nor bad. */
export class IssuerUnavailable extends Error {
  override name = 'IssuerUnavailable';
}

export class TokenVerifier implements OAuthTokenVerifier {
  private metadata: Promise<IssuerMetadata> | undefined;
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  private readonly introspected = new Map<string, { info: AuthInfo; until: number }>();

  constructor(private readonly settings: TokenSettings) {}

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const metadata = await this.issuerMetadata();
    if (looksLikeJwt(token)) return this.verifyJwt(token, metadata);
    if (metadata.introspection_endpoint) return this.introspect(token, metadata.introspection_endpoint);
    throw invalid('the token is not a JWT, and the authorization server offers no introspection');
  }

  private async verifyJwt(token: string, metadata: IssuerMetadata): Promise<AuthInfo> {
    if (!metadata.jwks_uri) throw invalid('the authorization server publishes no keys (jwks_uri)');
    // Keys are cached, and fetched again when a token names a key id not seen yet (rotation).
    this.jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri), { timeoutDuration: DISCOVERY_TIMEOUT_MS });
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, {
        issuer: metadata.issuer,
        audience: this.settings.audience,
        algorithms: ASYMMETRIC,
        clockTolerance: LEEWAY_SECONDS,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (error) {
      throw jwtRefusal(error);
    }
    return this.authInfo(token, payload);
  }

  private async introspect(token: string, endpoint: string): Promise<AuthInfo> {
    const key = createHash('sha256').update(token).digest('base64url');
    const cached = this.introspected.get(key);
    if (cached && cached.until > Date.now()) return cached.info;
    this.introspected.delete(key);
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    const { clientId, clientSecret } = this.settings;
    if (clientId) {
      const pair = `${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret ?? '')}`;
      headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
    }
    const body = new URLSearchParams({ token, token_type_hint: 'access_token' });
    const reply = await getJson(endpoint, { method: 'POST', headers, body });
    if (reply.active !== true) throw invalid('the token is not active (expired, revoked or unknown)');
    if (reply.iss !== undefined && !sameIssuer(String(reply.iss), this.settings.issuer))
      throw invalid('the token was issued by another authorization server');
    const audiences = reply.aud === undefined ? [] : [reply.aud].flat().map(String);
    if (!audiences.includes(this.settings.audience))
      throw invalid(`the token was not issued for this service (audience ${this.settings.audience})`);
    // A client-credentials token may name no subject: its client is the caller then.
    const sub = typeof reply.sub === 'string' ? reply.sub : reply.client_id;
    if (typeof sub !== 'string' || typeof reply.exp !== 'number')
      throw invalid('the introspection reply names neither subject nor client, or no expiry');
    if (reply.nbf !== undefined && Number(reply.nbf) > Date.now() / 1000 + LEEWAY_SECONDS)
      throw invalid('the token is not valid yet');
    const info = this.authInfo(token, { ...(reply as JWTPayload), sub });
    if (this.introspected.size >= INTROSPECTION_CACHE_SIZE) {
      const oldest = this.introspected.keys().next().value;
      if (oldest !== undefined) this.introspected.delete(oldest);
    }
    const until = Math.min(Date.now() + INTROSPECTION_CACHE_MS, (info.expiresAt ?? 0) * 1000);
    this.introspected.set(key, { info, until });
    return info;
  }

  private authInfo(token: string, claims: JWTPayload): AuthInfo {
    const clientId = [claims.client_id, claims.azp].find((c) => typeof c === 'string') as string | undefined;
    return {
      token,
      clientId: clientId ?? '',
      scopes: scopesOf(claims),
      ...(typeof claims.exp === 'number' ? { expiresAt: claims.exp } : {}),
      // The audience was checked above: the token is for this resource.
      resource: new URL(this.settings.resource),
      extra: { sub: claims.sub },
    };
  }

  /** The issuer's metadata, fetched on first use and again after a failure. */
  private issuerMetadata(): Promise<IssuerMetadata> {
    this.metadata ??= discover(this.settings.issuer).catch((error: unknown) => {
      this.metadata = undefined;
      throw error;
    });
    return this.metadata;
  }
}

/**
 * RFC 8414 puts the well-known part before the issuer's path, OpenID Connect Discovery after it;
 * the first document whose `issuer` is the configured one wins.
 */
async function discover(issuer: string): Promise<IssuerMetadata> {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  const candidates = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
    `${url.origin}/.well-known/openid-configuration${path}`,
  ];
  const problems: string[] = [];
  for (const candidate of candidates) {
    let document: Record<string, unknown>;
    try {
      document = await getJson(candidate, { headers: { accept: 'application/json' } });
    } catch (error) {
      problems.push(`${candidate}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    if (typeof document.issuer !== 'string' || !sameIssuer(document.issuer, issuer)) {
      problems.push(`${candidate} names another issuer (${String(document.issuer).slice(0, 200)})`);
      continue;
    }
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    return {
      issuer: document.issuer,
      ...(text(document.jwks_uri) ? { jwks_uri: text(document.jwks_uri) } : {}),
      ...(text(document.introspection_endpoint)
        ? { introspection_endpoint: text(document.introspection_endpoint) }
        : {}),
    };
  }
  throw new IssuerUnavailable(`no metadata for the issuer ${issuer}: ${problems.join('; ')}`);
}

async function getJson(url: string, init: RequestInit): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(url, {
      ...init,
      redirect: 'error',
      signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
    });
  } catch (error) {
    throw new IssuerUnavailable(
      `cannot reach ${url}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new IssuerUnavailable(`${url} answered HTTP ${response.status}`);
  }
  try {
    const value = (await response.json()) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Said below.
  }
  throw new IssuerUnavailable(`${url} did not answer with a JSON object`);
}

/** Issuers compared as RFC 8414 asks (identical), forgiving one trailing slash in the setting. */
function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/$/, '') === b.replace(/\/$/, '');
}

function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]*\.[\w-]*$/.test(token);
}

/** `scope` (RFC 9068, space-separated) or `scp` (Entra ID: a string; Okta: a list). */
function scopesOf(claims: JWTPayload): string[] {
  const value = claims.scope ?? claims.scp;
  if (typeof value === 'string') return value.split(' ').filter(Boolean);
  if (Array.isArray(value)) return value.filter((s): s is string => typeof s === 'string');
  return [];
}

function invalid(description: string): OAuthError {
  return new OAuthError(OAuthErrorCode.InvalidToken, description);
}

/** What a client is told about a refused JWT: the rule it broke, never the token. */
function jwtRefusal(error: unknown): Error {
  if (error instanceof errors.JWTExpired) return invalid('the token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return invalid('the token was issued by another authorization server');
    if (error.claim === 'aud') return invalid('the token was not issued for this service (audience)');
    if (error.claim === 'nbf') return invalid('the token is not valid yet');
    return invalid(`the token's ${error.claim} claim is missing or wrong`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed)
    return invalid('the token is not signed with an asymmetric algorithm this service accepts');
  if (error instanceof errors.JWKSNoMatchingKey)
    return invalid('the token is signed with a key the authorization server does not publish');
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return invalid('the token signature does not verify');
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid)
    return new IssuerUnavailable(`the authorization server's keys could not be read: ${error.message}`);
  if (error instanceof errors.JOSEError) return invalid('the token is not a well-formed signed JWT');
  // A failed fetch of the key set.
  return new IssuerUnavailable(
    `the authorization server's keys could not be read: ${error instanceof Error ? error.message : String(error)}`,
  );
}
