// @ts-check
// The audit log page.
import { html, dateTime, DataTable, ErrorNote, usePoll } from './components.js';

/** @typedef {import('./types.js').AuditEntryObject} AuditEntryObject */

/** @type {import('./components.js').Column<AuditEntryObject>[]} */
const COLUMNS = [
  { label: 'When', cell: (entry) => dateTime(entry.created_at) },
  { label: 'Who', cell: (entry) => entry.actor },
  { label: 'What', cell: (entry) => `${entry.action}${entry.count > 1 ? ` ×${entry.count}` : ''}` },
  { label: 'Target', cell: (entry) => entry.target ?? '—' },
  { label: 'From', cell: (entry) => entry.address ?? '—' },
];

export function AuditPage() {
  /** @type {[import('./components.js').Polled<import('./types.js').ListOf<AuditEntryObject>>, () => void]} */
  const [{ data, error }] = usePoll('audit', 15_000);
  return html`<main>
    <h1>Audit log</h1>
    <${ErrorNote} error=${error} />
    <${DataTable}
      label="Audit log"
      columns=${COLUMNS}
      rows=${data?.data}
      rowKey=${(/** @type {AuditEntryObject} */ entry) => entry.id}
      empty="Nothing has happened yet."
      loading=${null}
    />
  </main>`;
}
