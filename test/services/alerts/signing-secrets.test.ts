// Webhook signing secrets (services/alerts/signing-secrets.ts): Standard Webhooks `whsec_` secrets of
// 32 CSPRNG bytes that the official library signs and verifies with; sealed with AES-256-GCM when a
// key is configured, bound to their endpoint, unreadable without the key or with another one.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret, SecretUnavailableError, SigningSecrets } from '../../../src/services/alerts/signing-secrets.ts';

describe('signing secrets', () => {
  test('whsec_ and 32 random bytes; the standardwebhooks library signs and verifies with it', () => {
    const secret = newSigningSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
    assert.notEqual(newSigningSecret(), secret);
    const now = new Date();
    const body = '{"type":"webhook.test"}';
    const signature = new Webhook(secret).sign('msg_1', now, body);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
    };
    assert.deepEqual(new Webhook(secret).verify(body, headers), { type: 'webhook.test' });
  });

  test('without a key, stored as it is; with one, sealed and opened only for its own endpoint', () => {
    const secret = newSigningSecret();
    assert.equal(new SigningSecrets(undefined).seal(secret, 'whep_1'), secret);
    const key = randomBytes(32).toString('base64');
    const box = new SigningSecrets(key);
    const sealed = box.seal(secret, 'whep_1');
    assert.match(sealed, /^enc1:/);
    assert.ok(!sealed.includes(secret.slice(6)));
    assert.equal(box.open(sealed, 'whep_1'), secret);
    assert.throws(() => box.open(sealed, 'whep_2'), SecretUnavailableError);
    assert.throws(() => new SigningSecrets(randomBytes(32).toString('base64')).open(sealed, 'whep_1'), /was the key changed/);
    assert.throws(() => new SigningSecrets(undefined).open(sealed, 'whep_1'), /ALERT_WEBHOOK_SECRETS_KEY is not set/);
    // A secret stored before the key was set still opens.
    assert.equal(box.open(secret, 'whep_1'), secret);
  });
});
