// Who has the response cache (plans, organizations, keys) and what a request's directives ask.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AuthContext } from '../../../src/accounts/authenticator.ts';
import { responseCacheSchema } from '../../../src/config/response-cache-config.ts';
import { isServiceError } from '../../../src/core/service-error.ts';
import { cacheSettingsFor, directivesOf, directivesOfHeader, ttlSecondsOf } from '../../../src/services/cache/cache-policy.ts';

function auth(organizationId: string, keyId: string, plan = 'Developer'): AuthContext {
  return {
    keyId,
    organizationId,
    tier: plan,
    permissions: new Set(),
    expiresAt: null,
    limits: {
      requestsPerMinute: 0,
      tokensPerMinute: 0,
      tokensPerDay: 0,
      tokensPerMonth: 0,
      concurrentBatches: 0,
      maxRequestsPerBatch: 1,
      organizationRequestsPerMinute: 0,
      organizationTokensPerMinute: 0,
      plan,
    },
  };
}

describe('cache settings', () => {
  const config = responseCacheSchema.parse({
    plans: ['Enterprise'],
    organizations: {
      'org-on': { enabled: true, shareAcrossKeys: true, defaultTtlSeconds: 600, maxTtlSeconds: 900 },
      'org-off': { enabled: false },
    },
    keys: { 'key-off': false, 'key-on': true },
  });

  test('off by default', () => {
    assert.equal(cacheSettingsFor(responseCacheSchema.parse({}), auth('org-any', 'k')), undefined);
    assert.equal(cacheSettingsFor(config, auth('org-any', 'k')), undefined);
  });

  test('on by plan, by organization (which beats the plan), and by key', () => {
    assert.deepEqual(cacheSettingsFor(config, auth('org-any', 'k', 'Enterprise')), {
      shareAcrossKeys: false,
      cacheSampled: false,
      defaultTtlSeconds: 3600,
      maxTtlSeconds: 86_400,
    });
    assert.equal(cacheSettingsFor(config, auth('org-off', 'k', 'Enterprise')), undefined);
    assert.equal(cacheSettingsFor(config, auth('org-on', 'k'))?.shareAcrossKeys, true);
    assert.equal(cacheSettingsFor(config, auth('org-on', 'k'))?.defaultTtlSeconds, 600);
    // A key switched off has no cache in an organization that has it; a key switched on has its own.
    assert.equal(cacheSettingsFor(config, auth('org-on', 'key-off')), undefined);
    const keyOn = cacheSettingsFor(config, auth('org-off', 'key-on'));
    assert.equal(keyOn?.shareAcrossKeys, false);
  });

  test('the TTL: the request may shorten it, never lengthen it past the maximum', () => {
    const settings = cacheSettingsFor(config, auth('org-on', 'k'))!;
    assert.equal(ttlSecondsOf(settings, { noCache: false, noStore: false }), 600);
    assert.equal(ttlSecondsOf(settings, { noCache: false, noStore: false, ttlSeconds: 30 }), 30);
    assert.equal(ttlSecondsOf(settings, { noCache: false, noStore: false, ttlSeconds: 5000 }), 900);
  });
});

describe('request directives', () => {
  test('Cache-Control: no-cache, no-store, max-age; unknown directives ignored', () => {
    assert.deepEqual(directivesOfHeader(undefined), { noCache: false, noStore: false });
    assert.deepEqual(directivesOfHeader('No-Cache'), { noCache: true, noStore: false });
    assert.deepEqual(directivesOfHeader('no-store, max-age=60, x-other'), { noCache: false, noStore: true, ttlSeconds: 60 });
    assert.deepEqual(directivesOfHeader('max-age=abc'), { noCache: false, noStore: false });
  });

  test('the body field, over the header; a malformed one is a 400 naming the field', () => {
    assert.deepEqual(directivesOf(undefined, { switchyard_cache: { no_cache: true, ttl_seconds: 10 } }), {
      noCache: true,
      noStore: false,
      ttlSeconds: 10,
    });
    assert.deepEqual(directivesOf('max-age=5', { switchyard_cache: { ttl_seconds: 10 } }), {
      noCache: false,
      noStore: false,
      ttlSeconds: 5,
    });
    for (const [field, param] of [
      ['yes', 'switchyard_cache'],
      [[], 'switchyard_cache'],
      [{ no_cache: 'yes' }, 'switchyard_cache.no_cache'],
      [{ ttl_seconds: 1.5 }, 'switchyard_cache.ttl_seconds'],
      [{ forever: true }, 'switchyard_cache.forever'],
    ] as const) {
      assert.throws(
        () => directivesOf(undefined, { switchyard_cache: field }),
        (error) => isServiceError(error) && error.status === 400 && error.param === param,
      );
    }
  });
});
