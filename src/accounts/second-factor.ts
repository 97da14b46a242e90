/**
 * The dashboard's second factor: TOTP (RFC 6238, 6 digits, 30 s, SHA-1, what authenticator apps use;
 * otpauth) and one-time recovery codes. The server generates the secret at enrolment and keeps it
 * pending until a code from the app confirms it; the last accepted time step is stored, so a code
 * works once (a replay, or an older step's code, is refused: RFC 6238 section 5.2). Recovery codes are
 * issued when TOTP is turned on, shown once and stored as SHA-256 (80 random bits each, so a fast hash
 * is enough, as for API keys).
 */
import { createHash, randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { invalidParameter } from '../core/service-error.ts';
import type { AccountRecord, OwnersRepository } from '../db/repositories/owners-repository.ts';

const PERIOD_SECONDS = 30;
const RECOVERY_CODE_COUNT = 10;
/** 32 letters and digits without look-alikes (no 0/o, 1/l/i): 5 bits a character, 16 characters. */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const RECOVERY_LENGTH = 16;

export type SecondFactorCheck = 'accepted' | 'wrong' | 'replayed';

export interface TotpEnrolment {
  secret: string;
  /** The `otpauth://` URI authenticator apps read. */
  uri: string;
  /** The URI as a QR code, a `data:image/png` URL. */
  qrCode: string;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A presented recovery code in its stored form (lower case, no spaces or dashes), or undefined. */
function normalizeRecoveryCode(presented: string): string | undefined {
  const code = presented.toLowerCase().replace(/[\s-]/g, '');
  return code.length === RECOVERY_LENGTH && [...code].every((character) => RECOVERY_ALPHABET.includes(character)) ? code : undefined;
}

function newRecoveryCode(): string {
  let code = '';
  for (let index = 0; index < RECOVERY_LENGTH; index++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return code.replace(/(.{4})(?!$)/g, '$1-');
}

export class SecondFactor {
  constructor(
    private readonly repository: OwnersRepository,
    private readonly now: () => number,
  ) {}

  /** Starts enrolment: a new server-made secret, kept pending (TOTP stays as it is until `enable`). */
  async enrol(owner: AccountRecord): Promise<TotpEnrolment> {
    const secret = new Secret({ size: 20 }).base32;
    await this.repository.secondFactor.setPendingTotpSecret(owner.id, secret);
    const uri = this.totp(secret, owner.email).toString();
    // qrcode is loaded on the first enrolment, not with the server (it is only ever needed here).
    const { default: QRCode } = await import('qrcode');
    return { secret, uri, qrCode: await QRCode.toDataURL(uri) };
  }

  /** Turns TOTP on with the pending secret once `code` matches it; returns the new recovery codes (shown once). */
  async enable(owner: AccountRecord, code: string): Promise<string[]> {
    const secret = await this.repository.secondFactor.pendingTotpSecret(owner.id);
    if (secret === undefined) throw invalidParameter('code', 'Start the set-up first: no authenticator secret is waiting for a code.');
    const step = this.matchingStep(secret, code);
    if (step === undefined) throw invalidParameter('code', 'The code does not match; check the time on your device and try again.');
    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await this.repository.secondFactor.enableTotp(
      owner.id,
      secret,
      step,
      recoveryCodes.map((recoveryCode) => sha256(normalizeRecoveryCode(recoveryCode)!)),
      this.now(),
    );
    return recoveryCodes;
  }

  disable(owner: AccountRecord): Promise<void> {
    return this.repository.secondFactor.disableTotp(owner.id);
  }

  /**
   * Checks a presented code of an owner with TOTP on: a six-digit code of the current step (or the one
   * before or after, for clock drift) later than the last accepted one, or an unused recovery code.
   * An accepted code is used up at once (atomically, on any instance).
   */
  async check(owner: AccountRecord, presented: string): Promise<SecondFactorCheck> {
    if (owner.totpSecret === null) return 'wrong';
    if (/^\d{6}$/.test(presented)) {
      const step = this.matchingStep(owner.totpSecret, presented);
      if (step === undefined) return 'wrong';
      return (await this.repository.secondFactor.acceptTotpStep(owner.id, step)) ? 'accepted' : 'replayed';
    }
    const recoveryCode = normalizeRecoveryCode(presented);
    if (recoveryCode === undefined) return 'wrong';
    return (await this.repository.secondFactor.consumeRecoveryCode(owner.id, sha256(recoveryCode), this.now())) ? 'accepted' : 'wrong';
  }

  /** The time step a code belongs to (within one step of now), or undefined when it matches none. */
  private matchingStep(secret: string, code: string): number | undefined {
    if (!/^\d{6}$/.test(code)) return undefined;
    const timestamp = this.now();
    const delta = this.totp(secret, 'check').validate({ token: code, timestamp, window: 1 });
    return delta === null ? undefined : Math.floor(timestamp / 1000 / PERIOD_SECONDS) + delta;
  }

  private totp(secret: string, label: string): TOTP {
    return new TOTP({
      issuer: 'Switchyard',
      label,
      secret: Secret.fromBase32(secret),
      digits: 6,
      period: PERIOD_SECONDS,
      algorithm: 'SHA1',
    });
  }
}
