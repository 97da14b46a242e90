// @ts-check
// An organization's active API keys and stored bytes against its plan's cap and quota (issue 37 item 5):
// on the owners' keys and files pages (their organization) and the operator's organization page.
import { useEffect } from 'preact/hooks';
import { html, bytes, number, usePoll, ErrorNote } from './components.js';

/** @typedef {import('./types.js').OrganizationLimits} OrganizationLimits */

/** @param {OrganizationLimits['keys']} keys */
export const keysText = (keys) =>
  keys.limit === 0 ? `${number(keys.active)} active (no cap)` : `${number(keys.active)} of ${number(keys.limit)} active`;

/** @param {NonNullable<OrganizationLimits['storage']>} storage */
export function storageText(storage) {
  const used = bytes(storage.used_bytes);
  const pending = storage.reserved_bytes > 0 ? ` (+${bytes(storage.reserved_bytes)} uploading)` : '';
  return storage.limit_bytes === 0 ? `${used} used (no quota)${pending}` : `${used} of ${bytes(storage.limit_bytes)} used${pending}`;
}

/**
 * @param {{ path?: string, show?: Array<'keys' | 'storage'>, changed?: unknown }} props
 *   path: under /dashboard/api (`limits`, or the operator's `operator/organizations/<id>/limits`);
 *   changed: any value that changes when the page changed keys or files (the figures are read again)
 */
export function LimitsSummary({ path = 'limits', show = ['keys', 'storage'], changed }) {
  /** @type {[import('./components.js').Polled<OrganizationLimits>, () => void]} */
  const [{ data, error }, refresh] = usePoll(path, 10_000);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- `changed` is the trigger itself
  useEffect(() => refresh(), [changed]);
  if (!data) return html`<${ErrorNote} error=${error} />`;
  const full = (/** @type {number} */ used, /** @type {number} */ limit) => limit > 0 && used >= limit;
  return html`<dl class="facts" data-testid="organization-limits" aria-label="Limits of the organization">
    ${
      show.includes('keys')
        ? html`<dt>API keys</dt>
            <dd data-testid="limits-keys" class=${full(data.keys.active, data.keys.limit) ? 'warning' : ''}>${keysText(data.keys)}</dd>`
        : null
    }
    ${
      show.includes('storage') && data.storage !== null
        ? html`<dt>Storage</dt>
            <dd data-testid="limits-storage" title=${`${data.storage.used_bytes} of ${data.storage.limit_bytes} bytes`}>
              ${storageText(data.storage)}
            </dd>`
        : null
    }
  </dl>`;
}
