// The audit log page.
import { useCallback } from 'preact/hooks';
import { api } from './api.js';
import { html, dateTime, ErrorNote, usePoll } from './components.js';

export function AuditPage() {
  const load = useCallback(() => api('audit'), []);
  const [{ data, error }] = usePoll(load, 15_000);
  return html`<main>
    <h1>Audit log</h1>
    <${ErrorNote} error=${error} />
    ${
      data
        ? html`<div class="table-wrap"><table aria-label="Audit log">
          <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">From</th></tr></thead>
          <tbody>${data.data.map((entry) => html`<tr key=${entry.id}><td>${dateTime(entry.created_at)}</td><td>${entry.actor}</td><td>${entry.action}${entry.count > 1 ? ` ×${entry.count}` : ''}</td><td>${entry.target ?? '—'}</td><td>${entry.address ?? '—'}</td></tr>`)}</tbody>
        </table></div>`
        : null
    }
  </main>`;
}
