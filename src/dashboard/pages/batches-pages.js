// The batches list and one batch.
import { useCallback, useState } from 'preact/hooks';
import { api } from './api.js';
import { html, Link, dateTime, ErrorNote, usePoll } from './components.js';

export function BatchesPage({ session }) {
  const load = useCallback(() => api('batches'), []);
  const [{ data, error }, refresh] = usePoll(load, 10_000);
  const [actionError, setActionError] = useState(undefined);
  const cancel = async (batch) => {
    try {
      await api(`batches/${batch.id}/cancel`, { method: 'POST' });
      refresh();
    } catch (caught) {
      setActionError(caught);
    }
  };
  return html`<main>
    <h1>Batches</h1>
    <${ErrorNote} error=${error ?? actionError} />
    ${
      data
        ? html`<div class="table-wrap"><table aria-label="Batches">
          <thead><tr><th scope="col">Batch</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Created</th><th scope="col">Files</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${data.data.length === 0 ? html`<tr><td colspan="7">No batches.</td></tr>` : null}
            ${data.data.map((batch) => {
              const counts = batch.request_counts;
              return html`<tr key=${batch.id}>
                <td><${Link} href=${`/dashboard/batches/${batch.id}`}>${batch.id}<//></td><td>${batch.endpoint}</td><td>${batch.status}</td>
                <td><progress max=${Math.max(1, counts.total)} value=${counts.completed + counts.failed} aria-label=${`${counts.completed + counts.failed} of ${counts.total} requests done`}></progress> ${counts.completed + counts.failed}/${counts.total}</td>
                <td>${dateTime(batch.created_at * 1000)}</td>
                <td>${batch.output_file_id ? html`<a href=${`/dashboard/api/files/${batch.output_file_id}/content`}>output</a> ` : null}${batch.error_file_id ? html`<a href=${`/dashboard/api/files/${batch.error_file_id}/content`}>errors</a>` : null}</td>
                <td>${(batch.status === 'validating' || batch.status === 'in_progress') && session.role === 'owner' ? html`<button type="button" class="danger" onClick=${() => cancel(batch)} aria-label=${`Cancel ${batch.id}`}>Cancel</button>` : null}</td>
              </tr>`;
            })}
          </tbody>
        </table></div>`
        : html`<p>Loading…</p>`
    }
  </main>`;
}

export function BatchPage({ id }) {
  const load = useCallback(() => api(`batches/${encodeURIComponent(id)}`), [id]);
  const [{ data, error }] = usePoll(load, 5_000);
  return html`<main>
    <p><${Link} href="/dashboard/batches">← All batches<//></p>
    <h1>Batch ${id}</h1>
    <${ErrorNote} error=${error} />
    ${
      data
        ? html`<dl class="facts">
          <dt>Status</dt><dd>${data.status}</dd>
          <dt>Endpoint</dt><dd>${data.endpoint}</dd>
          <dt>Requests</dt><dd>${data.request_counts.total} total, ${data.request_counts.completed} completed, ${data.request_counts.failed} failed</dd>
          <dt>Input file</dt><dd><a href=${`/dashboard/api/files/${data.input_file_id}/content`}>${data.input_file_id}</a></dd>
          <dt>Output file</dt><dd>${data.output_file_id ? html`<a href=${`/dashboard/api/files/${data.output_file_id}/content`}>${data.output_file_id}</a>` : '—'}</dd>
          <dt>Error file</dt><dd>${data.error_file_id ? html`<a href=${`/dashboard/api/files/${data.error_file_id}/content`}>${data.error_file_id}</a>` : '—'}</dd>
        </dl>
        ${data.errors?.data?.length ? html`<h2>Errors</h2><ul>${data.errors.data.map((entry) => html`<li>${entry.line ? `Line ${entry.line}: ` : ''}${entry.code}: ${entry.message}</li>`)}</ul>` : null}`
        : html`<p>Loading…</p>`
    }
  </main>`;
}
