// @ts-check
// An audit entry's detail as people read it: a change ({ from, to }) as one line per field that
// differs ("plan: Developer → Production"), every other field as "field: value", nested objects by
// dotted path. Used by the operators' audit log, whose details were raw JSON in a narrow column.
import { html } from './components.js';

/** @typedef {Record<string, any>} Json */

/** @param {unknown} value */
const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** @param {unknown} value @returns {value is { from: unknown, to: unknown }} */
const isChange = (value) => isObject(value) && 'from' in /** @type {object} */ (value) && 'to' in /** @type {object} */ (value);

/**
 * Leaves of `value` by dotted path; null and absent are "not set" and leave no entry.
 * @param {unknown} value @param {string} prefix @param {Map<string, unknown>} into
 */
function flatten(value, prefix, into = new Map()) {
  if (value === null || value === undefined) return into;
  if (!isObject(value)) {
    into.set(prefix, value);
    return into;
  }
  for (const [key, inner] of Object.entries(/** @type {Record<string, unknown>} */ (value)))
    flatten(inner, prefix === '' ? key : `${prefix}.${key}`, into);
  return into;
}

/** @param {unknown} value */
function shown(value) {
  if (value === undefined) return 'not set';
  if (Array.isArray(value))
    return value.length === 0 ? 'none' : value.map((item) => (isObject(item) ? JSON.stringify(item) : String(item))).join(', ');
  if (isObject(value)) return JSON.stringify(value);
  return String(value);
}

/**
 * The lines of a detail: [field, text] pairs.
 * @param {unknown} detail
 * @returns {Array<[string, string]>}
 */
export function auditDetailLines(detail) {
  if (!isObject(detail)) return [['', shown(detail)]];
  /** @type {Array<[string, string]>} */
  const lines = [];
  /** @param {string} prefix @param {{ from: unknown, to: unknown }} change */
  const addChange = (prefix, change) => {
    const from = flatten(change.from, prefix);
    const to = flatten(change.to, prefix);
    const changed = [...new Set([...from.keys(), ...to.keys()])].filter((path) => shown(from.get(path)) !== shown(to.get(path)));
    if (changed.length === 0) lines.push([prefix || 'change', 'no change']);
    for (const path of changed) lines.push([path, `${shown(from.get(path))} → ${shown(to.get(path))}`]);
  };
  const record = /** @type {Record<string, unknown>} */ (detail);
  if (isChange(record)) addChange('', record);
  for (const [key, value] of Object.entries(record)) {
    if (isChange(record) && (key === 'from' || key === 'to')) continue;
    if (isChange(value)) addChange(key, value);
    else if (isObject(value)) for (const [path, leaf] of flatten(value, key)) lines.push([path, shown(leaf)]);
    else lines.push([key, shown(value)]);
  }
  return lines;
}

/** @param {{ detail: Json }} props */
export function AuditDetail({ detail }) {
  if (detail === null || detail === undefined) return '—';
  return html`<ul class="audit-detail">
    ${auditDetailLines(detail).map(
      ([field, text]) => html`<li key=${field}>${field === '' ? text : html`<span class="audit-field">${field}</span>: ${text}`}</li>`,
    )}
  </ul>`;
}
