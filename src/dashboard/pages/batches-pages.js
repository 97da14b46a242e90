// @ts-check
// The batches list (paged, searchable) and one batch.
import { useState } from 'preact/hooks';
import {
  html,
  Link,
  dateTime,
  DataTable,
  ErrorNote,
  LoadMore,
  SearchForm,
  useAction,
  useConfirm,
  usePaged,
  usePoll,
} from './components.js';

/** @typedef {import('./types.js').BatchObject} BatchObject */

/** @param {string} id */
const fileHref = (id) => `/dashboard/api/files/${id}/content`;

/** @param {BatchObject} batch */
function progress(batch) {
  const counts = batch.request_counts;
  const done = counts.completed + counts.failed;
  return html`<progress max=${Math.max(1, counts.total)} value=${done} aria-label=${`${done} of ${counts.total} requests done`}></progress>
    ${` ${done}/${counts.total}`}`;
}

/**
 * @param {{ owner: boolean, cancel: (batch: BatchObject) => void }} actions
 * @returns {import('./components.js').Column<BatchObject>[]}
 */
function batchColumns({ owner, cancel }) {
  const cancellable = (/** @type {BatchObject} */ batch) => (batch.status === 'validating' || batch.status === 'in_progress') && owner;
  return [
    { label: 'Batch', cell: (batch) => html`<${Link} href=${`/dashboard/batches/${batch.id}`}>${batch.id}<//>` },
    { label: 'Endpoint', cell: (batch) => batch.endpoint },
    { label: 'Status', cell: (batch) => batch.status },
    { label: 'Progress', cell: progress },
    { label: 'Created', cell: (batch) => dateTime(batch.created_at * 1000) },
    {
      label: 'Files',
      cell: (batch) => html`${batch.output_file_id ? html`<a href=${fileHref(batch.output_file_id)}>output</a> ` : null}
        ${batch.error_file_id ? html`<a href=${fileHref(batch.error_file_id)}>errors</a>` : null}`,
    },
    {
      label: 'Actions',
      hideLabel: true,
      cell: (batch) =>
        cancellable(batch)
          ? html`<button type="button" class="danger" onClick=${() => cancel(batch)} aria-label=${`Cancel ${batch.id}`}>Cancel</button>`
          : null,
    },
  ];
}

/** @param {import('./types.js').PageProps} props */
export function BatchesPage({ session }) {
  const [search, setSearch] = useState('');
  /** @type {import('./components.js').Paged<BatchObject>} */
  const paged = usePaged('batches', search, 10_000);
  const action = useAction(paged.refresh);
  const [dialog, ask] = useConfirm();
  /** @param {BatchObject} batch */
  const cancel = async (batch) => {
    const answer = await ask({
      title: `Cancel ${batch.id}?`,
      message: 'Lines not yet run are not run; the results so far are kept in the output file.',
      confirm: 'Cancel the batch',
      danger: true,
    });
    if (answer) action.run(`batches/${batch.id}/cancel`);
  };
  return html`<main>
    <h1>Batches</h1>
    <${ErrorNote} error=${paged.error ?? action.error} />
    <${SearchForm} label="Search batches" placeholder="batch id, endpoint or status" onSearch=${setSearch} />
    <${DataTable}
      label="Batches"
      columns=${batchColumns({ owner: session.role === 'owner', cancel })}
      rows=${paged.rows}
      rowKey=${(/** @type {BatchObject} */ batch) => batch.id}
      empty=${search ? 'No batch matches.' : 'No batches.'}
    />
    <${LoadMore} paged=${paged} label="batches" />
    ${dialog}
  </main>`;
}

/** A batch's file: a download link while it exists, its id marked deleted once it is gone. @param {{ id: string | null, gone?: string[] }} props */
const FileLink = ({ id, gone = [] }) => {
  if (!id) return '—';
  return gone.includes(id) ? html`<span>${id} <span class="muted">(deleted)</span></span>` : html`<a href=${fileHref(id)}>${id}</a>`;
};

/** @param {import('./types.js').PageProps} props */
export function BatchPage({ id = '' }) {
  /** @type {[import('./components.js').Polled<BatchObject>, () => void]} */
  const [{ data, error }] = usePoll(`batches/${encodeURIComponent(id)}`, 5_000);
  const counts = data?.request_counts;
  return html`<main>
    <p><${Link} href="/dashboard/batches">← All batches<//></p>
    <h1>Batch ${id}</h1>
    <${ErrorNote} error=${error} />
    ${
      data && counts
        ? html`<dl class="facts">
            <dt>Status</dt>
            <dd>${data.status}</dd>
            <dt>Endpoint</dt>
            <dd>${data.endpoint}</dd>
            <dt>Requests</dt>
            <dd>${counts.total} total, ${counts.completed} completed, ${counts.failed} failed</dd>
            <dt>Input file</dt>
            <dd><${FileLink} id=${data.input_file_id} gone=${data.unavailable_file_ids} /></dd>
            <dt>Output file</dt>
            <dd><${FileLink} id=${data.output_file_id} gone=${data.unavailable_file_ids} /></dd>
            <dt>Error file</dt>
            <dd><${FileLink} id=${data.error_file_id} gone=${data.unavailable_file_ids} /></dd>
          </dl>
          ${
            data.errors?.data?.length
              ? html`<h2>Errors</h2>
                <ul>
                  ${data.errors.data.map((entry) => html`<li>${entry.line ? `Line ${entry.line}: ` : ''}${entry.code}: ${entry.message}</li>`)}
                </ul>`
              : null
          }`
        : html`<p>Loading…</p>`
    }
  </main>`;
}
