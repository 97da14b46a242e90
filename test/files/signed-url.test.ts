// Signed file links: a valid link verifies, an expired one is told apart, any tampering is refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildSignedFileUrl, checkSignedFileUrl } from '../../src/files/signed-url.ts';

const SECRET = 'test-secret';

function parts(url: string): { fileId: string; expires: string; signature: string } {
  const parsed = new URL(url);
  const fileId = decodeURIComponent(parsed.pathname.split('/')[3]!);
  return { fileId, expires: parsed.searchParams.get('expires')!, signature: parsed.searchParams.get('signature')! };
}

describe('signed file links', () => {
  const url = buildSignedFileUrl(SECRET, 'https://ai.example.com/', 'file-abc', 2_000_000_000);

  test('the link has the documented shape', () => {
    assert.match(url, /^https:\/\/ai\.example\.com\/v1\/files\/file-abc\/signed-content\?expires=2000000000&signature=[A-Za-z0-9_-]{43}$/);
  });

  test('valid before its time, expired after it', () => {
    const { fileId, expires, signature } = parts(url);
    assert.equal(checkSignedFileUrl(SECRET, fileId, expires, signature, 1_999_999_999), 'valid');
    assert.equal(checkSignedFileUrl(SECRET, fileId, expires, signature, 2_000_000_000), 'valid');
    assert.equal(checkSignedFileUrl(SECRET, fileId, expires, signature, 2_000_000_001), 'expired');
  });

  test('tampering with the signature, the expiry, the file or the secret is invalid', () => {
    const { fileId, expires, signature } = parts(url);
    const flipped = (signature[0] === 'A' ? 'B' : 'A') + signature.slice(1);
    assert.equal(checkSignedFileUrl(SECRET, fileId, expires, flipped, 0), 'invalid');
    assert.equal(checkSignedFileUrl(SECRET, fileId, '2000000999', signature, 0), 'invalid');
    assert.equal(checkSignedFileUrl(SECRET, 'file-other', expires, signature, 0), 'invalid');
    assert.equal(checkSignedFileUrl('another-secret', fileId, expires, signature, 0), 'invalid');
    // An expired link with a pushed-back expiry is invalid, never "valid".
    assert.equal(checkSignedFileUrl(SECRET, fileId, '9999999999', signature, 2_100_000_000), 'invalid');
  });

  test('missing or malformed parameters are invalid', () => {
    const { fileId, expires, signature } = parts(url);
    assert.equal(checkSignedFileUrl(SECRET, fileId, undefined, signature, 0), 'invalid');
    assert.equal(checkSignedFileUrl(SECRET, fileId, expires, undefined, 0), 'invalid');
    assert.equal(checkSignedFileUrl(SECRET, fileId, '-5', signature, 0), 'invalid');
    assert.equal(checkSignedFileUrl(SECRET, fileId, '1e10', signature, 0), 'invalid');
    assert.equal(checkSignedFileUrl(SECRET, fileId, expires, '', 0), 'invalid');
  });
});
