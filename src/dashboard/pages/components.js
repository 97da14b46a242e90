// @ts-check
// Pieces every dashboard page uses: the htm binding, path navigation, formatting, errors, polling, the
// "call, show the error, refresh" action and the one table component.
import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { api } from './api.js';

/** @typedef {import('preact').ComponentChildren} Children */

export const html = htm.bind(h);

/** @param {string} path */
export function navigate(path) {
  history.pushState(null, '', path);
  window.dispatchEvent(new Event('popstate'));
}

/** @param {{ href: string, children?: Children, [attribute: string]: unknown }} props */
export function Link({ href, children, ...rest }) {
  /** @param {MouseEvent} event */
  const onClick = (event) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(href);
  };
  return html`<a href=${href} onClick=${onClick} ...${rest}>${children}</a>`;
}

/** @param {number | null | undefined} ms */
export const day = (ms) => (ms === null || ms === undefined ? '—' : new Date(ms).toISOString().slice(0, 10));
/** @param {number | null | undefined} ms */
export const dateTime = (ms) =>
  ms === null || ms === undefined ? '—' : new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
/** @param {number | string} value */
export const number = (value) => Number(value).toLocaleString('en-US');
/** @param {number} count a size in bytes, as people read it (1 KB = 1,000 bytes) */
export const bytes = (count) => {
  if (count < 1000) return `${count} bytes`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = count / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
};
/** @param {number | string} value */
export const usd = (value) => `$${Number(value).toFixed(4)}`;
export const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** Copies a secret shown once to the clipboard. @param {{ text: string, label: string }} props */
export function CopyButton({ text, label }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return html`<button type="button" onClick=${copy} aria-label=${label}>${copied ? 'Copied' : 'Copy'}</button>`;
}

/**
 * A secret shown this once (a new key, a webhook's signing secret): its text, a copy button and "Done".
 * @param {{ title: string, note: Children, secret: string, testId: string, copyLabel: string, onDone: () => void }} props
 */
export function ShownOnce({ title, note, secret, testId, copyLabel, onDone }) {
  return html`<section class="secret" aria-live="polite" aria-labelledby="secret-title">
    <h2 id="secret-title">${title}</h2>
    <p>${note}</p>
    <p>
      <code data-testid=${testId} class="key">${secret}</code>
      <${CopyButton} text=${secret} label=${copyLabel} />
    </p>
    <button type="button" onClick=${onDone}>Done</button>
  </section>`;
}

/** @param {{ error: Error | undefined | null }} props */
export function ErrorNote({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error.message}</p>`;
}

/**
 * @template T
 * @typedef {{ data: T | undefined, error: Error | undefined }} Polled
 */

/**
 * Loads one API path (or several, answered together as an array) now and every `intervalMs` (0: once),
 * again whenever a path changes. Paths, not a loader function, so no caller needs a memoised callback.
 * @template T
 * @param {string | string[]} paths
 * @param {number} intervalMs
 * @returns {[Polled<T>, () => void]}
 */
export function usePoll(paths, intervalMs) {
  const key = Array.isArray(paths) ? paths.join('\n') : paths;
  const several = Array.isArray(paths);
  /** @type {[Polled<T>, (update: Polled<T> | ((old: Polled<T>) => Polled<T>)) => void]} */
  const [state, setState] = useState(/** @type {Polled<T>} */ ({ data: undefined, error: undefined }));
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    const load = () => {
      const list = key.split('\n');
      const answer = several ? Promise.all(list.map((path) => api(path))) : api(list[0] ?? '');
      answer.then(
        (data) => live && setState({ data: /** @type {T} */ (data), error: undefined }),
        (error) => live && setState((old) => ({ ...old, error })),
      );
    };
    load();
    const timer = intervalMs ? setInterval(load, intervalMs) : undefined;
    return () => {
      live = false;
      if (timer !== undefined) clearInterval(timer);
    };
  }, [key, several, intervalMs, tick]);
  return [state, () => setTick((value) => value + 1)];
}

/**
 * "Call the API, show its error, refresh the page's data": the one action every page's buttons use.
 * `run` answers the result, or undefined when the call failed (the error is then in `error`).
 * @param {(() => void) | undefined} refresh
 */
export function useAction(refresh) {
  const [error, setError] = useState(/** @type {Error | undefined} */ (undefined));
  /**
   * @param {string} path
   * @param {{ method?: string, body?: unknown }} [options]
   * @returns {Promise<any>}
   */
  const run = async (path, options = { method: 'POST' }) => {
    try {
      const result = await api(path, { method: 'POST', ...options });
      setError(undefined);
      refresh?.();
      return result;
    } catch (caught) {
      setError(/** @type {Error} */ (caught));
      return undefined;
    }
  };
  return { run, error, setError };
}

/**
 * @template Row
 * @typedef {object} Column
 * @property {string} label  the header (visually hidden when `hideLabel`)
 * @property {(row: Row) => Children} cell
 * @property {string} [className]  of the cells
 * @property {boolean} [hideLabel]
 */

/**
 * The one table: a labelled, horizontally scrollable table; "Loading…" until `rows` arrive, `empty` when
 * there are none. Each cell carries its column's label, which the phone layout shows beside it.
 * @template Row
 * @param {{ label: string, columns: Column<Row>[], rows: Row[] | undefined, empty?: string, loading?: string | null,
 *   rowKey: (row: Row) => string | number, rowProps?: (row: Row) => Record<string, unknown>, footer?: Children }} props
 */
export function DataTable({ label, columns, rows, empty = 'Nothing here yet.', loading = 'Loading…', rowKey, rowProps, footer }) {
  if (rows === undefined) return loading ? html`<p>${loading}</p>` : null;
  return html`<div class="table-wrap">
    <table aria-label=${label} class="data">
      <thead>
        <tr>
          ${columns.map(
            (column) => html`<th scope="col">
              ${column.hideLabel ? html`<span class="visually-hidden">${column.label}</span>` : column.label}
            </th>`,
          )}
        </tr>
      </thead>
      <tbody>
        ${rows.length === 0 ? html`<tr><td colspan=${columns.length}>${empty}</td></tr>` : null}
        ${rows.map(
          (row) => html`<tr key=${rowKey(row)} ...${rowProps?.(row) ?? {}}>
            ${columns.map((column) => html`<td class=${column.className} data-label=${column.hideLabel ? undefined : column.label}>${column.cell(row)}</td>`)}
          </tr>`,
        )}
      </tbody>
      ${footer ? html`<tfoot>${footer}</tfoot>` : null}
    </table>
  </div>`;
}

/**
 * @template Row
 * @typedef {{ rows: Row[] | undefined, error: Error | undefined, hasMore: boolean, loadMore: () => void, refresh: () => void }} Paged
 */

const PAGE_SIZE = 50;

/**
 * A long list a page at a time: the first page of `path` (with `q` when searching; `path` may carry
 * filters of its own, `?status=failed`) is polled, "Load more" appends the next pages by cursor
 * (`after`), and a new search starts again from the first page.
 * @template Row
 * @param {string} path
 * @param {string} search
 * @param {number} intervalMs
 * @returns {Paged<Row> & { first: any }}
 */
export function usePaged(path, search, intervalMs) {
  const query = `${path}${path.includes('?') ? '&' : '?'}limit=${PAGE_SIZE}${search ? `&q=${encodeURIComponent(search)}` : ''}`;
  /** @type {[Polled<any>, () => void]} */
  const [{ data, error }, refresh] = usePoll(query, intervalMs);
  /** @type {[{ query: string, rows: Row[], next: string | null, hasMore: boolean }, (value: any) => void]} */
  const [more, setMore] = useState({
    query: '',
    rows: /** @type {Row[]} */ ([]),
    next: /** @type {string | null} */ (null),
    hasMore: false,
  });
  const [moreError, setMoreError] = useState(/** @type {Error | undefined} */ (undefined));
  const extra = more.query === query ? more : undefined;
  const loadMore = () => {
    const cursor = extra && extra.rows.length > 0 ? extra.next : data?.next;
    if (!cursor) return;
    api(`${query}&after=${encodeURIComponent(cursor)}`).then(
      (page) => {
        setMoreError(undefined);
        setMore({ query, rows: [...(extra?.rows ?? []), ...page.data], next: page.next, hasMore: page.has_more });
      },
      (caught) => setMoreError(caught),
    );
  };
  const rows = data === undefined ? undefined : [...data.data, ...(extra?.rows ?? [])];
  const hasMore = extra && extra.rows.length > 0 ? extra.hasMore : Boolean(data?.has_more);
  return { rows, error: error ?? moreError, hasMore, loadMore, refresh, first: data };
}

/** The control under a paged table: "Load more" while more rows follow. @param {{ paged: Paged<any>, label: string }} props */
export function LoadMore({ paged, label }) {
  if (!paged.hasMore) return null;
  return html`<div class="toolbar">
    <button type="button" class="secondary" onClick=${paged.loadMore} aria-label=${`Load more ${label}`}>Load more</button>
  </div>`;
}

/**
 * A search box for a list (uncontrolled, so a list answer arriving while someone types does not reset
 * it); `onSearch` gets the trimmed text when it is submitted.
 * @param {{ label: string, placeholder?: string, onSearch: (text: string) => void }} props
 */
export function SearchForm({ label, placeholder = '', onSearch }) {
  /** @param {SubmitEvent} event */
  const submit = (event) => {
    event.preventDefault();
    onSearch(String(new FormData(/** @type {HTMLFormElement} */ (event.currentTarget)).get('q') ?? '').trim());
  };
  const id = `search-${label.toLowerCase().replace(/[^a-z]+/g, '-')}`;
  return html`<form class="toolbar" role="search" aria-label=${label} onSubmit=${submit}>
    <label for=${id}>${label}</label>
    <input id=${id} name="q" type="search" placeholder=${placeholder} />
    <button type="submit">Search</button>
  </form>`;
}

/**
 * @typedef {object} ConfirmRequest
 * @property {string} title
 * @property {string} message
 * @property {string} confirm  the confirming button's text
 * @property {boolean} [danger]
 * @property {{ label: string, type?: string, value?: string, min?: string, max?: string }} [field]  one value to ask for
 * @property {import('preact').ComponentChildren} [body]  more form controls (named inputs, read back as FormData)
 */

/**
 * A styled confirmation (a modal `<dialog>`) instead of window.confirm/prompt: `ask(request)` answers
 * the form's data when confirmed, undefined when cancelled (Cancel, Escape).
 * @returns {[import('preact').ComponentChildren, (request: ConfirmRequest) => Promise<FormData | undefined>]}
 */
export function useConfirm() {
  const [request, setRequest] = useState(
    /** @type {(ConfirmRequest & { resolve: (value: FormData | undefined) => void }) | undefined} */ (undefined),
  );
  /** @param {ConfirmRequest} options */
  const ask = (options) => new Promise((resolve) => setRequest({ ...options, resolve }));
  /** @param {FormData | undefined} value */
  const close = (value) => {
    request?.resolve(value);
    setRequest(undefined);
  };
  return [request ? html`<${ConfirmDialog} request=${request} onClose=${close} />` : null, ask];
}

/** @param {{ request: ConfirmRequest, onClose: (value: FormData | undefined) => void }} props */
function ConfirmDialog({ request, onClose }) {
  const dialog = useRef(/** @type {HTMLDialogElement | null} */ (null));
  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
  }, []);
  /** @param {SubmitEvent} event */
  const submit = (event) => {
    event.preventDefault();
    onClose(new FormData(/** @type {HTMLFormElement} */ (event.currentTarget)));
  };
  /** @param {Event} event */
  const cancel = (event) => {
    event.preventDefault();
    onClose(undefined);
  };
  const field = request.field;
  return html`<dialog ref=${dialog} class="confirm" aria-labelledby="confirm-dialog-title" onCancel=${cancel}>
    <form onSubmit=${submit}>
      <h2 id="confirm-dialog-title">${request.title}</h2>
      <p>${request.message}</p>
      ${
        field
          ? html`<label for="confirm-dialog-field">${field.label}</label>
            <input
              id="confirm-dialog-field"
              name="value"
              type=${field.type ?? 'text'}
              defaultValue=${field.value ?? ''}
              min=${field.min}
              max=${field.max}
              required
            />`
          : null
      }
      ${request.body ?? null}
      <div class="dialog-actions">
        <button type="submit" class=${request.danger ? 'danger' : ''}>${request.confirm}</button>
        <button type="button" class="secondary" onClick=${cancel}>Cancel</button>
      </div>
    </form>
  </dialog>`;
}
