// The HTTP transport as an OAuth 2.1 resource server, as the MCP authorization specification asks
// of a shared server: it serves its protected-resource metadata (RFC 9728), answers a request
// without a good token with a 401 that points to that metadata, takes the access tokens of one
// authorization server issued for this service (RFC 8707), and, when scopes are required, refuses
// a tool call outside the token's scopes with a 403 insufficient_scope challenge.
//
// Loaded only when GATEWAY_OAUTH_ISSUER is set (serve.ts imports it on demand): a server without
// OAuth never reads jose or this code.

import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AuthInfo,
  bearerAuthChallengeResponse,
  buildOAuthProtectedResourceMetadata,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  OAuthErrorCode,
  type OAuthMetadata,
  type OAuthProtectedResourceMetadata,
  verifyBearerToken,
} from '@modelcontextprotocol/server';
import { type Config, ConfigError } from '../../../config/config.js';
import type { Logger } from '../../../lib/log.js';
import { sendJson } from '../io.js';
import { missingScope, scopesByToolName, TOOL_SCOPES } from './scopes.js';
import { IssuerUnavailable, TokenVerifier } from './tokens.js';

type OAuthSettings = Pick<
  Config,
  | 'oauthIssuer'
  | 'publicUrl'
  | 'oauthAudience'
  | 'oauthRequireScopes'
  | 'oauthClientId'
  | 'oauthClientSecret'
  | 'toolPrefix'
>;

/** A request the transports may serve carries the verified token here, as the SDK's Node transports read it. */
export type AuthenticatedRequest = IncomingMessage & { auth?: AuthInfo };

export class ResourceServer {
  /** The RFC 8707 resource: <GATEWAY_PUBLIC_URL>/mcp. */
  readonly resource: string;
  readonly metadataUrl: string;
  private readonly metadata: OAuthProtectedResourceMetadata;
  private readonly verifier: TokenVerifier;
  private readonly toolScopes: Map<string, string>;
  /** Scopes named in every challenge: all of them when they are required, else none. */
  private readonly challengeScopes: string[];

  constructor(
    settings: OAuthSettings,
    private readonly log: Pick<Logger, 'debug' | 'warn'>,
  ) {
    const { oauthIssuer: issuer, publicUrl } = settings;
    if (!issuer) throw new ConfigError('GATEWAY_OAUTH_ISSUER is not set');
    if (!publicUrl) {
      throw new ConfigError(
        'GATEWAY_OAUTH_ISSUER needs GATEWAY_PUBLIC_URL (--public-url): the base URL clients reach this ' +
          'service at, e.g. https://mcp.example.com; tokens must be issued for <it>/mcp',
      );
    }
    this.resource = `${publicUrl}/mcp`;
    this.metadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(this.resource));
    this.challengeScopes = settings.oauthRequireScopes ? [...TOOL_SCOPES] : [];
    try {
      this.metadata = {
        // The SDK's builder reads only the issuer of the authorization server's metadata (and
        // checks it: HTTPS unless on loopback, no query, no fragment).
        ...buildOAuthProtectedResourceMetadata({
          oauthMetadata: { issuer } as OAuthMetadata,
          resourceServerUrl: new URL(this.resource),
          resourceName: 'gateway-tools-mcp',
          ...(this.challengeScopes.length > 0 ? { scopesSupported: this.challengeScopes } : {}),
        }),
        bearer_methods_supported: ['header'],
      };
    } catch (error) {
      throw new ConfigError(
        `invalid GATEWAY_OAUTH_ISSUER (--oauth-issuer): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    this.verifier = new TokenVerifier({
      issuer,
      audience: settings.oauthAudience ?? this.resource,
      resource: this.resource,
      ...(settings.oauthClientId ? { clientId: settings.oauthClientId } : {}),
      ...(settings.oauthClientSecret ? { clientSecret: settings.oauthClientSecret } : {}),
    });
    this.toolScopes = scopesByToolName(settings);
  }

  /** The host name of GATEWAY_PUBLIC_URL, which clients send as Host. */
  get publicHost(): string {
    return new URL(this.resource).hostname;
  }

  /**
   * Serves the metadata at both of its RFC 9728 paths (the path-aware one for /mcp, and the root
   * one clients that drop the path ask); true when `pathname` was one of them.
   */
  serveMetadata(pathname: string, method: string, res: ServerResponse): boolean {
    const path = pathname.replace(/\/$/, '');
    if (path !== '/.well-known/oauth-protected-resource' && path !== new URL(this.metadataUrl).pathname)
      return false;
    // A public document, read by browser-based clients from any origin.
    const cors = { 'access-control-allow-origin': '*' };
    if (method === 'OPTIONS') {
      res
        .writeHead(204, {
          ...cors,
          'access-control-allow-methods': 'GET, OPTIONS',
          'access-control-allow-headers': 'mcp-protocol-version',
        })
        .end();
    } else if (method !== 'GET' && method !== 'HEAD') {
      sendJson(res, 405, { error: 'method_not_allowed' }, { ...cors, allow: 'GET, OPTIONS' });
    } else {
      sendJson(res, 200, this.metadata, { ...cors, 'cache-control': 'max-age=3600' });
    }
    return true;
  }

  /**
   * The verified token of the request, or undefined once the request has been answered: 401 with
   * a challenge that points to the metadata (and says invalid_token when a token was sent), 503
   * when the authorization server cannot be asked.
   */
  async authenticate(req: IncomingMessage, res: ServerResponse, what: string): Promise<AuthInfo | undefined> {
    const header = req.headers.authorization;
    if (!header) {
      // RFC 6750 §3.1: a request that sent no credentials gets no error code, only the way to them.
      this.log.debug(`refused ${what}: no bearer token`);
      const scope = this.challengeScopes.length > 0 ? `, scope="${this.challengeScopes.join(' ')}"` : '';
      sendJson(
        res,
        401,
        { error: 'invalid_token', error_description: 'this service takes OAuth access tokens' },
        { 'www-authenticate': `Bearer resource_metadata="${this.metadataUrl}"${scope}` },
      );
      return undefined;
    }
    try {
      return await verifyBearerToken(header, {
        verifier: this.verifier,
        resourceMetadataUrl: this.metadataUrl,
        expectedResource: new URL(this.resource),
      });
    } catch (error) {
      if (error instanceof IssuerUnavailable) {
        this.log.warn(`cannot check the token of ${what}: ${error.message}`);
        sendJson(
          res,
          503,
          {
            error: 'temporarily_unavailable',
            error_description: 'the authorization server cannot be reached',
          },
          { 'retry-after': '5' },
        );
        return undefined;
      }
      this.log.debug(`refused ${what}: ${error instanceof OAuthError ? error.message : String(error)}`);
      await send(
        res,
        bearerAuthChallengeResponse(error, {
          resourceMetadataUrl: this.metadataUrl,
          requiredScopes: this.challengeScopes,
        }),
      );
      return undefined;
    }
  }

  /**
   * Answers 403 insufficient_scope, and says true, when scopes are required and the body calls a
   * tool whose scope the request's token lacks. The challenge names the token's scopes and the
   * missing one, so a client that asks for exactly those keeps what it could already do.
   */
  async refuseScopes(req: AuthenticatedRequest, res: ServerResponse, body: unknown): Promise<boolean> {
    if (this.challengeScopes.length === 0 || !req.auth) return false;
    const missing = missingScope(body, req.auth, this.toolScopes);
    if (!missing) return false;
    this.log.debug(`refused ${missing.tool}: the token lacks the scope ${missing.scope}`);
    const error = new OAuthError(
      OAuthErrorCode.InsufficientScope,
      `${missing.tool} needs the scope ${missing.scope}`,
    );
    const scopes = [...new Set([...req.auth.scopes, missing.scope])];
    await send(
      res,
      bearerAuthChallengeResponse(error, { requiredScopes: scopes, resourceMetadataUrl: this.metadataUrl }),
    );
    return true;
  }
}

/** Writes a web Response (a small JSON challenge) to a Node response. */
async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  const text = await response.text();
  res.writeHead(response.status, { ...headers, 'content-length': Buffer.byteLength(text) }).end(text);
}
