/**
 * Single sign-on (README "Single sign-on"): the `sso` config section. One or more OpenID Connect
 * providers (issuer, client id, client secret read from a file, scopes, button label), the rules that
 * map a person's claims to an organization and a role, and the password policy (SSO-only for the whole
 * deployment or for some organizations, with break-glass operator accounts that keep their password).
 * `resolveSsoConfig` reads each client secret file once at start, as upstream keys are read.
 */
import { z } from 'zod';
import { ConfigError } from './config-error.ts';
import { readSecretFile, secretFilePath } from './secret-file.ts';

/** Organization ids follow the key service's rule; `_operators` is reserved for operators. */
const organizationId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'use letters, digits, ".", "_" and "-" (at most 100)');

/**
 * One access rule: when the claim `claim` of the person's ID token equals `value` (or, for an array
 * claim such as `groups`, contains it), the person belongs to `organization` with `role`; role
 * `operator` takes no organization. `email_domain` is a derived claim: the domain of a verified email.
 */
export const ssoRuleSchema = z
  .strictObject({
    claim: z.string().min(1).max(200),
    value: z.union([z.string().min(1).max(500), z.number(), z.boolean()]),
    organization: organizationId.optional(),
    role: z.enum(['owner', 'member', 'operator']),
  })
  .superRefine((rule, context) => {
    if (rule.role === 'operator' && rule.organization !== undefined)
      context.addIssue({
        code: 'custom',
        path: ['organization'],
        message: 'an operator rule names no organization (operators serve them all)',
      });
    if (rule.role !== 'operator' && rule.organization === undefined)
      context.addIssue({
        code: 'custom',
        path: ['organization'],
        message: `a ${rule.role} rule names the organization it gives access to`,
      });
  });
export type SsoRule = z.infer<typeof ssoRuleSchema>;

export const ssoProviderSchema = z.strictObject({
  /** Names the provider in URLs (`/dashboard/api/sso/<id>/start`) and in audit rows. */
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'use lower-case letters, digits and "-" (at most 40)'),
  /** The sign-in button's text, e.g. "Sign in with Okta". */
  label: z.string().min(1).max(80),
  /** The provider's name in messages ("Okta did not let you in"); default: the id. */
  name: z.string().min(1).max(80).optional(),
  /** The issuer URL; its `/.well-known/openid-configuration` is read (discovery). */
  issuer: z.url({ protocol: /^https?$/ }),
  clientId: z.string().min(1).max(500),
  /** The client secret, kept in a file (`{ file: /run/secrets/oidc }`); absent: a public client (PKCE only). */
  clientSecret: z.strictObject({ file: z.string().min(1) }).optional(),
  /** Scopes asked for; `openid` is always sent. */
  scopes: z.array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/)).default(['openid', 'email', 'profile']),
  /** Access rules, most specific first: an operator rule wins; else the first matching organization, with the highest role its rules give. */
  rules: z.array(ssoRuleSchema).min(1, 'give at least one rule, or nobody can sign in with this provider'),
  /**
   * A person whose verified email matches an existing password account is linked to it on their first
   * SSO sign-in only when this is true (the operator allows it); otherwise that sign-in is refused.
   */
  linkExistingAccounts: z.boolean().default(false),
  /**
   * Use the `email` claim only with `email_verified: true` (Keycloak, Google, Okta send it). Microsoft
   * Entra ID sends no such claim: set false there, and map by `groups` or `tid`, not by a user-editable address.
   */
  requireVerifiedEmail: z.boolean().default(true),
  /** Tolerance for the ID token's times (exp, iat, nbf) against this server's clock, seconds. */
  clockToleranceSeconds: z.number().int().min(0).max(600).default(30),
  /** Allow an `http://` issuer (a provider on this machine, for tests): never for a real deployment. */
  allowInsecureHttp: z.boolean().default(false),
  /** Longest wait for the provider (discovery, JWKS, token endpoint), ms. */
  timeoutMs: z.number().int().min(100).max(60_000).default(10_000),
});

export const ssoSchema = z
  .strictObject({
    providers: z.array(ssoProviderSchema).default([]),
    /** Password sign-in is refused for everyone but the break-glass operators (SSO-only deployment). */
    ssoOnly: z.boolean().default(false),
    /** Organizations whose people may not sign in with a password (SSO-only organizations). */
    ssoOnlyOrganizations: z.array(organizationId).default([]),
    /** Operator accounts (emails) that keep password sign-in while SSO-only is on: the way in when the provider is down. */
    breakGlassOperators: z.array(z.email().transform((email) => email.toLowerCase())).default([]),
    /** How long a started sign-in (state, nonce, PKCE verifier) waits for the provider's answer, ms. */
    pendingLifetimeMs: z.number().int().min(10_000).max(3_600_000).default(600_000),
    /** Unfinished sign-ins one address may hold at once (each is a row): more are refused with 429 until some finish or expire. */
    maxPendingPerAddress: z.number().int().min(1).max(10_000).default(30),
  })
  .prefault({});

export type SsoProviderConfig = z.infer<typeof ssoProviderSchema> & {
  /** The client secret read from `clientSecret.file` at start; undefined for a public client. */
  clientSecretValue: string | undefined;
};
export type SsoConfig = Omit<z.infer<typeof ssoSchema>, 'providers'> & { providers: SsoProviderConfig[] };

/** Reads each provider's client secret file and checks the section as a whole. */
export function resolveSsoConfig(section: z.infer<typeof ssoSchema>): SsoConfig {
  const seen = new Set<string>();
  const providers = section.providers.map((provider, index) => {
    if (seen.has(provider.id))
      throw new ConfigError(`sso.providers[${index}]: the id "${provider.id}" is used twice. Give each provider its own id.`);
    seen.add(provider.id);
    if (!provider.allowInsecureHttp && provider.issuer.startsWith('http:'))
      throw new ConfigError(
        `sso.providers[${index}] ("${provider.id}"): the issuer ${provider.issuer} is plain HTTP. Use the provider's https:// issuer URL.`,
      );
    const file = secretFilePath(provider.clientSecret);
    const clientSecretValue = file === undefined ? undefined : readSecretFile(file, `sso.providers[${index}].clientSecret`);
    return { ...provider, clientSecretValue };
  });
  if (section.ssoOnly && providers.length === 0)
    throw new ConfigError(
      'sso.ssoOnly is on but no sso.providers are configured: nobody but the break-glass operators could sign in. Add a provider or turn ssoOnly off.',
    );
  return { ...section, providers };
}
