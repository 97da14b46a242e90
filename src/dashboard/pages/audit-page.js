// @ts-check
// The audit log page: newest first, a page at a time, searchable; keys named as the keys page names them.
import { useState } from 'preact/hooks';
import { html, dateTime, DataTable, ErrorNote, LoadMore, SearchForm, usePaged } from './components.js';

/** @typedef {import('./types.js').AuditEntryObject} AuditEntryObject */

/** @type {import('./components.js').Column<AuditEntryObject>[]} */
const COLUMNS = [
  { label: 'When', className: 'nowrap', cell: (entry) => dateTime(entry.created_at) },
  { label: 'Who', cell: (entry) => entry.actor },
  { label: 'What', cell: (entry) => `${entry.action}${entry.count > 1 ? ` ×${entry.count}` : ''}` },
  {
    label: 'Target',
    cell: (entry) => (entry.target_label ? html`<span title=${entry.target ?? ''}>${entry.target_label}</span>` : (entry.target ?? '—')),
  },
  { label: 'From', cell: (entry) => entry.address ?? '—' },
];

export function AuditPage() {
  const [search, setSearch] = useState('');
  /** @type {import('./components.js').Paged<AuditEntryObject>} */
  const paged = usePaged('audit', search, 15_000);
  return html`<main>
    <h1>Audit log</h1>
    <${ErrorNote} error=${paged.error} />
    <${SearchForm} label="Search the log" placeholder="who, what or target" onSearch=${setSearch} />
    <${DataTable}
      label="Audit log"
      columns=${COLUMNS}
      rows=${paged.rows}
      rowKey=${(/** @type {AuditEntryObject} */ entry) => entry.id}
      empty=${search ? 'No entry matches.' : 'Nothing has happened yet.'}
      loading=${null}
    />
    <${LoadMore} paged=${paged} label="entries" />
  </main>`;
}
