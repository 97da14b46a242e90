// The provider config after loading, secrets read. Its own file so that the checks over it
// (`cross-check.ts`) depend on the type, not on the loader that produces it.
import type { ProviderConfig } from './schema.ts';

/**
 * A provider with its secrets read: `apiKeyValue` is its first key (`apiKey`, else the first of
 * `apiKeys`); `apiKeyValues` lists every key when there are several (each one a deployment of its own).
 */
export type ResolvedProviderConfig = ProviderConfig & {
  id: string;
  apiKeyValue?: string;
  apiKeyValues?: readonly string[];
  /** The file `apiKeyValue` was read from (`apiKey: { file }`, re-read on change); `apiKeyFiles` aligns with `apiKeyValues`. */
  apiKeyFile?: string;
  apiKeyFiles?: readonly (string | undefined)[];
};
