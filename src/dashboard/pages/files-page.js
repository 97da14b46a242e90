// @ts-check
// The files page: list, download, delete.
import { html, dateTime, number, DataTable, ErrorNote, useAction, usePoll } from './components.js';

/** @typedef {import('./types.js').FileObject} FileObject */

/**
 * @param {{ owner: boolean, remove: (file: FileObject) => void }} actions
 * @returns {import('./components.js').Column<FileObject>[]}
 */
function fileColumns({ owner, remove }) {
  return [
    {
      label: 'File',
      cell: (file) => html`${file.filename}${' '}
        <span class="muted">${file.id}</span>`,
    },
    { label: 'Purpose', cell: (file) => file.purpose },
    { label: 'Size', cell: (file) => `${number(file.bytes)} bytes` },
    { label: 'Created', cell: (file) => dateTime(file.created_at * 1000) },
    {
      label: 'Actions',
      hideLabel: true,
      className: 'actions',
      cell: (file) => html`<a class="button" href=${`/dashboard/api/files/${file.id}/content`} aria-label=${`Download ${file.filename}`}>
          Download
        </a>
        ${
          owner
            ? html`<button type="button" class="danger" onClick=${() => remove(file)} aria-label=${`Delete ${file.filename}`}>Delete</button>`
            : null
        }`,
    },
  ];
}

/** @param {import('./types.js').PageProps} props */
export function FilesPage({ session }) {
  /** @type {[import('./components.js').Polled<import('./types.js').ListOf<FileObject>>, () => void]} */
  const [{ data, error }, refresh] = usePoll('files', 10_000);
  const action = useAction(refresh);
  /** @param {FileObject} file */
  const remove = (file) => {
    if (window.confirm(`Delete ${file.filename}?`)) action.run(`files/${file.id}`, { method: 'DELETE' });
  };
  return html`<main>
    <h1>Files</h1>
    <${ErrorNote} error=${error ?? action.error} />
    <${DataTable}
      label="Files"
      columns=${fileColumns({ owner: session.role === 'owner', remove })}
      rows=${data?.data}
      rowKey=${(/** @type {FileObject} */ file) => file.id}
      empty="No files."
    />
  </main>`;
}
