/**
 * Webhook signing secrets: made with the CSPRNG in the Standard Webhooks form (`whsec_` and 32 random
 * bytes in base64, https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 * "Signature scheme"), shown once at creation, and kept so every instance can sign.
 *
 * A signing secret is a symmetric HMAC key: it cannot be stored as a hash as API keys are. With
 * ALERT_WEBHOOK_SECRETS_KEY set, it is encrypted at rest with AES-256-GCM (random 96-bit IV, the
 * endpoint id as additional data, so a ciphertext copied onto another endpoint does not open); without
 * it the secret is stored as it is, which protects nothing less than a key kept in the same database
 * would. Secrets stored before the key was set keep working; new ones are encrypted.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ENCRYPTED_PREFIX = 'enc1:';
const SECRET_PREFIX = 'whsec_';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A new secret: `whsec_` and 32 bytes from the CSPRNG, base64. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** Why a stored secret could not be read back (the key is missing or not the one it was sealed with). */
export class SecretUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretUnavailableError';
  }
}

export class SigningSecrets {
  private readonly key: Buffer | undefined;

  /** @param secretsKey 32 bytes in base64 (config `alerts.webhooks.secretsKey`), or undefined: stored as they are. */
  constructor(secretsKey: string | undefined) {
    this.key = secretsKey === undefined ? undefined : Buffer.from(secretsKey.trim(), 'base64');
  }

  /** True when new secrets are encrypted at rest. */
  get encrypting(): boolean {
    return this.key !== undefined;
  }

  /** The form to store `secret` of endpoint `endpointId` in. */
  seal(secret: string, endpointId: string): string {
    if (this.key === undefined) return secret;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(endpointId, 'utf8'));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${ENCRYPTED_PREFIX}${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
  }

  /** The secret from its stored form; throws SecretUnavailableError when it cannot be decrypted. */
  open(stored: string, endpointId: string): string {
    if (!stored.startsWith(ENCRYPTED_PREFIX)) return stored;
    if (this.key === undefined) {
      throw new SecretUnavailableError("the endpoint's secret is encrypted and ALERT_WEBHOOK_SECRETS_KEY is not set");
    }
    const bytes = Buffer.from(stored.slice(ENCRYPTED_PREFIX.length), 'base64');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(endpointId, 'utf8'));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnavailableError("the endpoint's secret does not open with ALERT_WEBHOOK_SECRETS_KEY (was the key changed?)");
    }
  }
}
