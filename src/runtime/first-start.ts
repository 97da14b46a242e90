/**
 * The first start of an empty database: the first key and the default organization's owner with a
 * set-password link, created by exactly one of several instances starting together.
 */
import type { CreatedKey, KeyService } from '../accounts/key-service.ts';
import type { DashboardAccounts } from '../accounts/dashboard-accounts.ts';
import type { Config } from '../config/index.ts';
import { randomHex } from '../core/ids.ts';
import type { ApiKeysRepository } from '../db/repositories/api-keys-repository.ts';
import type { FilesRepository } from '../db/repositories/files-repository.ts';

/** What the first start of an empty database created (printed once by `serve`). */
export interface FirstStartSecrets {
  key: CreatedKey;
  /** The default organization's owner and the token of their set-password link (absent if that owner already existed). */
  ownerLink: { email: string; token: string } | undefined;
}

/** Settings row claimed by the one instance that creates the first-start key. */
const BOOTSTRAP_MARKER_SETTING = 'bootstrap_key_claimed_by';

export interface FirstStartSources {
  config: Config;
  /** Create a first key when the database has none. */
  bootstrapKey: boolean;
  repository: ApiKeysRepository;
  /** Holds the settings table (the claim marker). */
  filesRepository: FilesRepository;
  keys: KeyService;
  accounts: DashboardAccounts;
}

export function firstStartSecrets(sources: FirstStartSources): () => Promise<FirstStartSecrets | undefined> {
  const { config, repository, filesRepository, keys, accounts } = sources;
  return async (): Promise<FirstStartSecrets | undefined> => {
    if (!sources.bootstrapKey || (await repository.count()) > 0) return undefined;
    // Several instances may start together on an empty database: the one whose marker row lands
    // first (insert-if-absent, atomic in both dialects) creates the key; the others see its claim.
    const claimant = randomHex(16);
    if ((await filesRepository.ensureSetting(BOOTSTRAP_MARKER_SETTING, claimant)) !== claimant) return undefined;
    const key = await keys.create({ name: 'bootstrap' });
    const email = `owner@${config.defaultOrganization}.local`;
    if ((await accounts.findOwnerByEmail(email)) !== undefined) return { key, ownerLink: undefined };
    return {
      key,
      ownerLink: { email, token: (await accounts.createOwner({ organization: config.defaultOrganization, email })).linkToken! },
    };
  };
}
