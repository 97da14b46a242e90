// @ts-check
// Pieces every dashboard page uses: the htm binding, path navigation, formatting, errors, polling, the
// "call, show the error, refresh" action and the one table component.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
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
/** @param {number | string} value */
export const usd = (value) => `$${Number(value).toFixed(4)}`;
export const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

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
