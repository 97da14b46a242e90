// The files page: list, download, delete.
import { useCallback, useState } from 'preact/hooks';
import { api } from './api.js';
import { html, dateTime, number, ErrorNote, usePoll } from './components.js';

export function FilesPage({ session }) {
  const load = useCallback(() => api('files'), []);
  const [{ data, error }, refresh] = usePoll(load, 10_000);
  const [actionError, setActionError] = useState(undefined);
  const remove = async (file) => {
    if (!window.confirm(`Delete ${file.filename}?`)) return;
    try {
      await api(`files/${file.id}`, { method: 'DELETE' });
      refresh();
    } catch (caught) {
      setActionError(caught);
    }
  };
  return html`<main>
    <h1>Files</h1>
    <${ErrorNote} error=${error ?? actionError} />
    ${
      data
        ? html`<div class="table-wrap"><table aria-label="Files">
          <thead><tr><th scope="col">File</th><th scope="col">Purpose</th><th scope="col">Size</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${data.data.length === 0 ? html`<tr><td colspan="5">No files.</td></tr>` : null}
            ${data.data.map(
              (
                file,
              ) => html`<tr key=${file.id}><td>${file.filename} <span class="muted">${file.id}</span></td><td>${file.purpose}</td><td>${number(file.bytes)} bytes</td><td>${dateTime(file.created_at * 1000)}</td>
                <td class="actions"><a class="button" href=${`/dashboard/api/files/${file.id}/content`} aria-label=${`Download ${file.filename}`}>Download</a>
                ${session.role === 'owner' ? html`<button type="button" class="danger" onClick=${() => remove(file)} aria-label=${`Delete ${file.filename}`}>Delete</button>` : null}</td></tr>`,
            )}
          </tbody>
        </table></div>`
        : html`<p>Loading…</p>`
    }
  </main>`;
}
