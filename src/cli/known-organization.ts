/**
 * The CLI's check that an organization named with `--org` exists, so that a typo neither creates a new
 * organization silently (`keys create`) nor reads as an organization with no usage (`usage`).
 */
import { didYouMean } from '../core/closest-name.ts';
import type { ApiKeysRepository } from '../db/repositories/api-keys-repository.ts';
import { CliUsageError } from './arguments.ts';

/** Throws a CliUsageError naming the closest known organization, and `remedy`, when `organization` does not exist. */
export async function requireKnownOrganization(repository: ApiKeysRepository, organization: string, remedy: string): Promise<void> {
  const known = await repository.organizationIds();
  if (known.includes(organization)) return;
  throw new CliUsageError(`Organization '${organization}' does not exist.${didYouMean(organization, known)} ${remedy}`);
}
