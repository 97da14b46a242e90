// @ts-check
// The files page: list (paged, searchable; sizes as people read them, expiry), upload, download, delete.
import { useState } from 'preact/hooks';
import { ApiError, currentCsrfToken } from './api.js';
import { LimitsSummary } from './limits-summary.js';
import { html, bytes, dateTime, DataTable, ErrorNote, LoadMore, SearchForm, useAction, useConfirm, usePaged } from './components.js';

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
    { label: 'Size', className: 'nowrap', cell: (file) => html`<span title=${`${file.bytes} bytes`}>${bytes(file.bytes)}</span>` },
    { label: 'Created', cell: (file) => dateTime(file.created_at * 1000) },
    { label: 'Expires', cell: (file) => (file.expires_at === null ? 'never' : dateTime(file.expires_at * 1000)) },
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

/** Upload as /v1/files takes it: the file and its purpose, multipart. @param {{ onUploaded: () => void }} props */
function UploadForm({ onUploaded }) {
  const [error, setError] = useState(/** @type {Error | undefined} */ (undefined));
  const [uploaded, setUploaded] = useState(/** @type {FileObject | undefined} */ (undefined));
  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const element = /** @type {HTMLFormElement} */ (event.currentTarget);
    const response = await fetch('/dashboard/api/files', {
      method: 'POST',
      headers: { accept: 'application/json', 'x-csrf-token': currentCsrfToken() },
      credentials: 'same-origin',
      body: new FormData(element),
    });
    const payload = await response.json().catch(() => ({}));
    if (!response.ok) return setError(new ApiError(response.status, payload.error));
    element.reset();
    setError(undefined);
    setUploaded(payload);
    onUploaded();
  };
  return html`<form class="card" aria-label="Upload a file" onSubmit=${submit}>
    <h2>Upload a file</h2>
    <label for="upload-file">File</label>
    <input id="upload-file" name="file" type="file" required />
    <label for="upload-purpose">Purpose</label>
    <select id="upload-purpose" name="purpose">
      <option value="batch">batch (input of a batch)</option>
      <option value="user_data">user_data</option>
      <option value="assistants">assistants</option>
      <option value="vision">vision</option>
    </select>
    <button type="submit">Upload</button>
    <${ErrorNote} error=${error} />
    ${uploaded ? html`<p role="status">Uploaded ${uploaded.filename} (${bytes(uploaded.bytes)}) as ${uploaded.id}.</p>` : null}
  </form>`;
}

/** @param {import('./types.js').PageProps} props */
export function FilesPage({ session }) {
  const [search, setSearch] = useState('');
  /** @type {import('./components.js').Paged<FileObject>} */
  const paged = usePaged('files', search, 10_000);
  const action = useAction(paged.refresh);
  const [dialog, ask] = useConfirm();
  const owner = session.role === 'owner';
  /** @param {FileObject} file */
  const remove = async (file) => {
    const answer = await ask({
      title: `Delete ${file.filename}?`,
      message: 'The file and its content are removed; batches that used it keep their results.',
      confirm: 'Delete',
      danger: true,
    });
    if (answer) action.run(`files/${file.id}`, { method: 'DELETE' });
  };
  return html`<main>
    <h1>Files</h1>
    <${LimitsSummary} show=${['storage']} changed=${paged.rows} />
    ${owner ? html`<${UploadForm} onUploaded=${paged.refresh} />` : null}
    <${ErrorNote} error=${paged.error ?? action.error} />
    <${SearchForm} label="Search files" placeholder="file name or id" onSearch=${setSearch} />
    <${DataTable}
      label="Files"
      columns=${fileColumns({ owner, remove })}
      rows=${paged.rows}
      rowKey=${(/** @type {FileObject} */ file) => file.id}
      empty=${search ? 'No file matches.' : 'No files.'}
    />
    <${LoadMore} paged=${paged} label="files" />
    ${dialog}
  </main>`;
}
