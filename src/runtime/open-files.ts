/**
 * The file service over the blob store, with the organizations' storage quotas (their plans'
 * `storageQuotaBytes`): every upload, through `/v1/files` or the dashboard, reserves its bytes in the
 * database before storing them (services/files/storage-quota.ts).
 */
import type { OrganizationService } from '../accounts/organizations.ts';
import type { Config } from '../config/index.ts';
import type { Database } from '../db/database.ts';
import type { FilesRepository } from '../db/repositories/files-repository.ts';
import { StorageQuotaRepository } from '../db/repositories/storage-quota-repository.ts';
import type { BlobStore } from '../files/blob-store.ts';
import { systemClock, type Clock } from '../limits/clock.ts';
import { FileService } from '../services/files/file-service.ts';
import { StorageQuota } from '../services/files/storage-quota.ts';

export async function openFiles(
  config: Config,
  database: Database,
  repository: FilesRepository,
  store: BlobStore,
  organizations: OrganizationService,
  clock: Clock | undefined,
): Promise<FileService> {
  const storage = new StorageQuota(
    new StorageQuotaRepository(database.db),
    // An organization without a row yet has no plan to read: the default tier's quota stands.
    {
      quotaBytes: async (organizationId) =>
        (await organizations.planOf(organizationId))?.storageQuotaBytes ?? config.tiers[config.defaultTier]!.storageQuotaBytes,
    },
    clock ?? systemClock,
  );
  const files = new FileService({ repository, store, storage, ...(clock === undefined ? {} : { clock }) });
  await files.start();
  return files;
}
