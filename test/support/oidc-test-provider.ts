/**
 * A real OpenID Connect provider (oidc-provider, the certified implementation) on 127.0.0.1 for the
 * single sign-on tests: its own login and consent pages (the library's development interactions: any
 * password is accepted for a known login), people whose groups a test changes between sign-ins, and
 * a signing key the test holds, so that a test can make the provider answer with an ID token that is
 * altered, issued for another client, or expired (`nextIdToken`), as a faulty or hostile provider would.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider from 'oidc-provider';

export interface TestPerson {
  email: string;
  emailVerified?: boolean;
  groups: string[];
}

/**
 * How the next token answer's ID token is spoiled: altered after signing; re-signed for another
 * audience; re-signed expired; re-signed as a provider whose clock is an hour ahead would make it.
 */
export type IdTokenFault = 'tampered' | 'wrong-audience' | 'expired' | 'clock-ahead';

export interface TestClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
}

export interface OidcTestProvider {
  issuer: string;
  /** Logins (what the provider's login page takes) and who they are; change `groups` between sign-ins. */
  people: Map<string, TestPerson>;
  /** Registers the clients (once the servers, and so their redirect URIs, are known); the provider answers only after this. */
  configure(clients: TestClient[]): void;
  /** Spoils the ID token of the next token answer only. */
  nextIdToken(fault: IdTokenFault): void;
  close(): Promise<void>;
}

export async function startOidcTestProvider(): Promise<OidcTestProvider> {
  const people = new Map<string, TestPerson>();
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  let fault: IdTokenFault | undefined;
  let handler: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  const server: Server = createServer((request, response) => {
    if (handler === undefined) {
      response.writeHead(503).end('not configured yet');
      return;
    }
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const issuer = `http://127.0.0.1:${port}`;

  async function spoil(idToken: string, how: IdTokenFault): Promise<string> {
    const claims = decodeJwt(idToken);
    const header = decodeProtectedHeader(idToken);
    if (how === 'tampered') {
      // The payload changed after signing (another email), the signature kept: it no longer verifies.
      const [head, , signature] = idToken.split('.');
      const payload = Buffer.from(JSON.stringify({ ...claims, email: 'mallory@acme.example' })).toString('base64url');
      return `${head}.${payload}.${signature}`;
    }
    const now = Math.floor(Date.now() / 1000);
    const changed =
      how === 'wrong-audience'
        ? { ...claims, aud: 'another-application' }
        : how === 'expired'
          ? { ...claims, iat: now - 7200, exp: now - 3600 }
          : { ...claims, iat: now + 3600, nbf: now + 3600, exp: now + 7200 };
    return new SignJWT(changed)
      .setProtectedHeader({ alg: 'RS256', kid: header.kid ?? 'test-key-1', typ: header.typ ?? 'JWT' })
      .sign(privateKey);
  }

  return {
    issuer,
    people,
    configure(clients) {
      const provider = new Provider(issuer, {
        clients: clients.map((client) => ({
          client_id: client.clientId,
          client_secret: client.clientSecret,
          redirect_uris: client.redirectUris,
          response_types: ['code'],
          grant_types: ['authorization_code'],
          token_endpoint_auth_method: 'client_secret_basic',
        })),
        jwks: { keys: [signingKey] },
        async findAccount(_context: unknown, id: string) {
          const person = people.get(id);
          if (person === undefined) return undefined;
          return {
            accountId: id,
            claims: async () => ({
              sub: id,
              email: person.email,
              email_verified: person.emailVerified ?? true,
              groups: [...person.groups],
            }),
          };
        },
        claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
        scopes: ['openid', 'email', 'groups'],
        // The claims go into the ID token itself (as Keycloak, Entra ID and Okta can be set to do).
        conformIdTokenClaims: false,
        features: { devInteractions: { enabled: true } },
        pkce: { required: () => true },
        cookies: { keys: ['switchyard-test-cookie-key'] },
      });
      provider.use(async (context, next) => {
        await next();
        const body = context.body as { id_token?: unknown } | undefined;
        if (context.path === '/token' && fault !== undefined && typeof body?.id_token === 'string') {
          const how = fault;
          fault = undefined;
          context.body = { ...body, id_token: await spoil(body.id_token, how) };
        }
      });
      handler = provider.callback();
    },
    nextIdToken(how) {
      fault = how;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
