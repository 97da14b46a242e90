/**
 * The OpenID Connect side of single sign-on, all of it done by openid-client
 * (https://github.com/panva/openid-client/blob/v6.x/docs/README.md): discovery of each configured
 * provider (cached per instance, retried after a failure), the authorization URL with state, nonce and
 * a PKCE S256 challenge, and the authorization code grant that checks the response's state and issuer,
 * then the ID token's signature (the provider's JWKS, fetched again when a new key id appears: key
 * rotation), issuer, audience, expiry and nonce. Nothing here parses or verifies a token by hand.
 */
import * as oidc from 'openid-client';
import type { SsoProviderConfig } from '../../config/index.ts';
import { fromProviderError, SsoError } from './sso-errors.ts';

export interface AuthorizationRequest {
  redirectUri: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** What a successful code exchange proves: the ID token's claims (issuer, audience, expiry, nonce and signature checked). */
export type VerifiedClaims = Record<string, unknown> & { sub: string };

/** How messages name a provider. */
export const providerName = (provider: SsoProviderConfig): string => provider.name ?? provider.id;

export class OidcClients {
  private readonly configurations = new Map<string, Promise<oidc.Configuration>>();

  constructor(private readonly providers: readonly SsoProviderConfig[]) {}

  list(): readonly SsoProviderConfig[] {
    return this.providers;
  }

  find(id: string): SsoProviderConfig {
    const provider = this.providers.find((entry) => entry.id === id);
    if (provider === undefined) throw new SsoError('unknown_provider', 404, `No sign-in provider "${id}" is configured here.`);
    return provider;
  }

  /** The discovered configuration; a failed discovery is forgotten, so the next sign-in tries again. */
  private configuration(provider: SsoProviderConfig): Promise<oidc.Configuration> {
    let configuration = this.configurations.get(provider.id);
    if (configuration === undefined) {
      configuration = this.discover(provider);
      configuration.catch(() => this.configurations.delete(provider.id));
      this.configurations.set(provider.id, configuration);
    }
    return configuration;
  }

  private async discover(provider: SsoProviderConfig): Promise<oidc.Configuration> {
    const timeoutSeconds = Math.max(1, Math.ceil(provider.timeoutMs / 1000));
    const metadata: Partial<oidc.ClientMetadata> = { [oidc.clockTolerance]: provider.clockToleranceSeconds };
    const authentication = provider.clientSecretValue === undefined ? oidc.None() : oidc.ClientSecretBasic(provider.clientSecretValue);
    const configuration = await oidc.discovery(new URL(provider.issuer), provider.clientId, metadata, authentication, {
      timeout: timeoutSeconds,
      ...(provider.allowInsecureHttp ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
    configuration.timeout = timeoutSeconds;
    // Without this, openid-client trusts an ID token from the token endpoint on the strength of TLS alone
    // (OpenID Connect Core 3.1.3.7 allows it); here its signature is always checked against the JWKS.
    oidc.enableNonRepudiationChecks(configuration);
    return configuration;
  }

  /** The provider's authorization URL for a new sign-in (response type code, PKCE S256). */
  async authorizationUrl(provider: SsoProviderConfig, request: AuthorizationRequest): Promise<URL> {
    try {
      const configuration = await this.configuration(provider);
      const scopes = new Set(['openid', ...provider.scopes]);
      return oidc.buildAuthorizationUrl(configuration, {
        redirect_uri: request.redirectUri,
        scope: [...scopes].join(' '),
        state: request.state,
        nonce: request.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(request.codeVerifier),
        code_challenge_method: 'S256',
      });
    } catch (error) {
      throw fromProviderError(error, providerName(provider), provider.clockToleranceSeconds);
    }
  }

  /**
   * Completes a sign-in from the provider's redirect (`callbackUrl`: the redirect URI sent at the start
   * with the query the provider answered): checks, exchanges the code, verifies the ID token.
   */
  async finish(provider: SsoProviderConfig, callbackUrl: URL, request: Omit<AuthorizationRequest, 'redirectUri'>): Promise<VerifiedClaims> {
    try {
      const configuration = await this.configuration(provider);
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: request.codeVerifier,
        expectedState: request.state,
        expectedNonce: request.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (claims === undefined)
        throw new SsoError(
          'token_invalid',
          502,
          `${providerName(provider)} sent no ID token. Check that the "openid" scope is allowed for this client.`,
        );
      return { ...claims } as VerifiedClaims;
    } catch (error) {
      throw fromProviderError(error, providerName(provider), provider.clockToleranceSeconds);
    }
  }
}
