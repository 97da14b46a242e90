/**
 * The hash of what callers see of a config: models and their routes, providers (without their keys),
 * tiers, validation, limits and file store. Instances behind one balancer must agree on it, or a model
 * configured on one only answers 404 and 200 in turn; where each instance listens, its data directory,
 * log level, instance id and upstream secrets (and the files they are read from) may differ and are left out.
 */
import { createHash } from 'node:crypto';
import type { Config } from './load-config.ts';

/** JSON with object keys sorted, so the same config always gives the same text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, field]) => field !== undefined)
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonicalJson(field)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** sha256 hex of the config's caller-visible part. */
export function effectiveConfigHash(config: Config): string {
  const providers = Object.fromEntries(
    Object.entries(config.providers).map(([id, provider]) => {
      const shape: Record<string, unknown> = { ...provider };
      for (const secret of ['apiKey', 'apiKeys', 'apiKeyValue', 'apiKeyValues', 'apiKeyFile', 'apiKeyFiles']) delete shape[secret];
      // The number of keys shapes routing (one deployment per key); their values do not. Header values
      // may be secrets too: only their names count.
      shape['keyCount'] = provider.apiKeyValues?.length ?? (provider.apiKeyValue === undefined ? 0 : 1);
      shape['headers'] = Object.keys(provider.headers).sort();
      return [id, shape];
    }),
  );
  const visible = {
    operator: config.operator,
    models: config.models,
    providers,
    tiers: config.tiers,
    retiredTiers: config.retiredTiers,
    defaultTier: config.defaultTier,
    requestValidation: config.requestValidation,
    limitsBackend: config.limitsBackend,
    filesStore: config.filesStore.kind,
    bodyLimitBytes: config.server.bodyLimitBytes,
    uploadLimitBytes: config.server.uploadLimitBytes,
    // Which webhook URLs owners may register: an endpoint accepted by one instance must be by every one.
    alertWebhooks: { allowHttp: config.alerts.webhooks.allowHttp, allowPrivateAddresses: config.alerts.webhooks.allowPrivateAddresses },
  };
  return createHash('sha256').update(canonicalJson(visible)).digest('hex');
}
