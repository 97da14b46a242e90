/**
 * The dashboard's second factor at rest: the TOTP secret the server generated at enrolment (pending
 * until a code confirms it), the active secret with its last accepted time step, and the one-time
 * recovery codes (their SHA-256 only). Every use is one conditional update, so of two instances
 * accepting one code at once only one succeeds.
 */
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.ts';

export class SecondFactorRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** Keeps the secret the server generated at enrolment until a code confirms it. */
  async setPendingTotpSecret(ownerId: string, secret: string): Promise<void> {
    await this.db.updateTable('owners').set({ totp_pending_secret: secret }).where('id', '=', ownerId).execute();
  }

  async pendingTotpSecret(ownerId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('owners').select('totp_pending_secret').where('id', '=', ownerId).executeTakeFirst();
    return row?.totp_pending_secret ?? undefined;
  }

  /**
   * Turns the second factor on with the confirmed secret, the step of the code that confirmed it (so
   * that code cannot be used again) and a new set of recovery codes (their SHA-256), replacing any old set.
   */
  async enableTotp(ownerId: string, secret: string, step: number, recoveryCodeHashes: readonly string[], now: number): Promise<void> {
    await this.db.transaction().execute(async (transaction) => {
      await transaction
        .updateTable('owners')
        .set({ totp_secret: secret, totp_pending_secret: null, totp_last_step: step })
        .where('id', '=', ownerId)
        .execute();
      await transaction.deleteFrom('owner_recovery_codes').where('owner_id', '=', ownerId).execute();
      if (recoveryCodeHashes.length > 0)
        await transaction
          .insertInto('owner_recovery_codes')
          .values(recoveryCodeHashes.map((codeHash) => ({ owner_id: ownerId, code_hash: codeHash, created_at: now, used_at: null })))
          .execute();
    });
  }

  async disableTotp(ownerId: string): Promise<void> {
    await this.db.transaction().execute(async (transaction) => {
      await transaction
        .updateTable('owners')
        .set({ totp_secret: null, totp_pending_secret: null, totp_last_step: null })
        .where('id', '=', ownerId)
        .execute();
      await transaction.deleteFrom('owner_recovery_codes').where('owner_id', '=', ownerId).execute();
    });
  }

  /**
   * Records `step` as the owner's last accepted TOTP step when it is later than the stored one; false
   * when it is not (a replayed or older code). Atomic: of two sign-ins racing with one code, one wins.
   */
  async acceptTotpStep(ownerId: string, step: number): Promise<boolean> {
    const result = await this.db
      .updateTable('owners')
      .set({ totp_last_step: step })
      .where('id', '=', ownerId)
      .where('totp_secret', 'is not', null)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Uses one of the owner's unused recovery codes (by its SHA-256); false when there is none such. Atomic. */
  async consumeRecoveryCode(ownerId: string, codeHash: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('owner_recovery_codes')
      .set({ used_at: now })
      .where('owner_id', '=', ownerId)
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async unusedRecoveryCodes(ownerId: string): Promise<number> {
    const row = await this.db
      .selectFrom('owner_recovery_codes')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('owner_id', '=', ownerId)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.total);
  }
}
