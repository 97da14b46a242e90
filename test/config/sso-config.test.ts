// The `sso` config section (config/sso-config.ts) and the claim rules (accounts/sso/claim-rules.ts):
// safe defaults, the client secret read from its file, refusals that say what to fix, and who gets in
// as what from a token's claims.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { accessFromClaims, claimValue } from '../../src/accounts/sso/claim-rules.ts';
import { ConfigError, loadConfig, type ConfigInput } from '../../src/config/index.ts';

const load = (sso: ConfigInput['sso']) => loadConfig({ env: {}, overrides: { dataDir: tmpdir(), sso } }).sso;
const provider = (extra: Record<string, unknown> = {}) => ({
  id: 'okta',
  label: 'Sign in with Okta',
  issuer: 'https://acme.okta.com',
  clientId: '0oa1',
  rules: [{ claim: 'groups', value: 'acme', organization: 'org-acme', role: 'member' }],
  ...extra,
});

describe('sso config', () => {
  test('off by default: no providers, passwords allowed', () => {
    const sso = load(undefined);
    assert.deepEqual(sso.providers, []);
    assert.equal(sso.ssoOnly, false);
    assert.deepEqual(sso.ssoOnlyOrganizations, []);
    assert.equal(sso.pendingLifetimeMs, 600_000);
  });

  test('a provider with its secret read from a file, and the defaults', () => {
    const directory = mkdtempSync(join(tmpdir(), 'switchyard-sso-config-'));
    writeFileSync(join(directory, 'secret'), '  s3cret-value\n');
    const [okta] = load({ providers: [provider({ clientSecret: { file: join(directory, 'secret') } }) as never] }).providers;
    assert.equal(okta?.clientSecretValue, 's3cret-value');
    assert.deepEqual(okta?.scopes, ['openid', 'email', 'profile']);
    assert.equal(okta?.linkExistingAccounts, false);
    assert.equal(okta?.requireVerifiedEmail, true);
    assert.equal(okta?.clockToleranceSeconds, 30);
  });

  test('refusals name the setting and the fix', () => {
    assert.throws(
      () => load({ providers: [provider({ clientSecret: { file: '/nonexistent/secret' } }) as never] }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /sso\.providers\[0\]\.clientSecret names the file \/nonexistent\/secret, which does not exist/.test(error.message),
    );
    assert.throws(
      () => load({ providers: [provider({ issuer: 'http://idp.example' }) as never] }),
      /plain HTTP. Use the provider's https:\/\/ issuer URL/,
    );
    assert.throws(() => load({ providers: [provider() as never, provider() as never] }), /the id "okta" is used twice/);
    assert.throws(() => load({ ssoOnly: true }), /ssoOnly is on but no sso.providers/);
    assert.throws(
      () =>
        load({
          providers: [provider({ rules: [{ claim: 'groups', value: 'ops', organization: 'org-acme', role: 'operator' }] }) as never],
        }),
      /operator rule names no organization/,
    );
    assert.throws(
      () => load({ providers: [provider({ rules: [{ claim: 'groups', value: 'x', role: 'owner' }] }) as never] }),
      /owner rule names the organization/,
    );
    assert.throws(() => load({ providers: [provider({ rules: [] }) as never] }), /at least one rule/);
  });
});

describe('claim rules', () => {
  const rules = [
    { claim: 'groups', value: 'ops', role: 'operator' as const },
    { claim: 'email_domain', value: 'acme.example', organization: 'org-acme', role: 'member' as const },
    { claim: 'groups', value: 'acme-admins', organization: 'org-acme', role: 'owner' as const },
    { claim: 'groups', value: 'globex', organization: 'org-globex', role: 'member' as const },
    { claim: 'https://example.com/tenant', value: 'beta', organization: 'org-beta', role: 'member' as const },
  ];

  test('the first matching organization, owner when any of its matching rules says so', () => {
    assert.deepEqual(accessFromClaims(rules, { email_domain: 'acme.example', groups: [] }), { role: 'member', organization: 'org-acme' });
    assert.deepEqual(accessFromClaims(rules, { email_domain: 'acme.example', groups: ['acme-admins'] }), {
      role: 'owner',
      organization: 'org-acme',
    });
    // Rules are taken in the config's order, not the claim's.
    assert.deepEqual(accessFromClaims(rules, { groups: ['globex', 'acme-admins'] }), { role: 'owner', organization: 'org-acme' });
    assert.deepEqual(accessFromClaims(rules, { groups: ['globex'] }), { role: 'member', organization: 'org-globex' });
  });

  test('operator only through an operator rule', () => {
    assert.deepEqual(accessFromClaims(rules, { groups: ['acme-admins', 'ops'] }), { role: 'operator' });
    assert.deepEqual(accessFromClaims(rules, { groups: 'ops' }), { role: 'operator' });
    assert.equal(accessFromClaims(rules, { groups: ['Ops', 'ops-team'], role: 'operator' }), undefined);
  });

  test('no matching rule, no access; URL-named and nested claims', () => {
    assert.equal(accessFromClaims(rules, { groups: [] }), undefined);
    assert.equal(accessFromClaims(rules, {}), undefined);
    assert.deepEqual(accessFromClaims(rules, { 'https://example.com/tenant': 'beta' }), { role: 'member', organization: 'org-beta' });
    assert.deepEqual(claimValue({ realm_access: { roles: ['a'] } }, 'realm_access.roles'), ['a']);
    assert.equal(claimValue({ realm_access: ['x'] }, 'realm_access.roles'), undefined);
  });
});
