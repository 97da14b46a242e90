// @ts-check
// The usage page's response-cache card: requests answered from the cache and what they saved over the
// page's range (GET /dashboard/api/cache/savings), and, for owners, the purge of the organization's entries.
import { useState } from 'preact/hooks';
import { html, number, usd, ErrorNote, usePoll, useAction } from './components.js';

/**
 * @typedef {object} CacheSavings
 * @property {number} requests
 * @property {number} saved_tokens
 * @property {number} saved_usd
 */

/** @param {{ days: number, owner: boolean }} props */
export function CacheCard({ days, owner }) {
  /** @type {[import('./components.js').Polled<CacheSavings>, () => void]} */
  const [{ data, error }, refresh] = usePoll(`cache/savings?days=${days}`, 30_000);
  const action = useAction(refresh);
  const [purged, setPurged] = useState(/** @type {number | undefined} */ (undefined));
  // The cache API is mounted with the cache; without it there is nothing to show.
  if (!data) return error ? null : html`<p>Loading…</p>`;
  const purge = async () => {
    if (!window.confirm('Delete every cached answer of this organization? The next identical requests go to the model again.')) return;
    const result = await action.run('cache/purge');
    if (result) setPurged(result.purged);
  };
  return html`<section class="card" aria-labelledby="cache-title">
    <h2 id="cache-title">Response cache</h2>
    <${ErrorNote} error=${action.error} />
    <p>
      ${number(data.requests)} requests answered from the cache, ${number(data.saved_tokens)} tokens and ${usd(data.saved_usd)}
      saved in this range.
    </p>
    ${owner ? html`<button type="button" onClick=${purge}>Purge cache</button>` : null}
    ${purged === undefined ? null : html`<p role="status">Purged ${number(purged)} cached answers.</p>`}
  </section>`;
}
