// @ts-check
// Money budgets (issue 37 item 4). Owners and members (/dashboard/budgets): the organization's budget
// with its spend, what remains and when it resets, and every key's budget; owners set a key's budget
// in dollars (never above the organization's: the server says so) or clear it. Operators
// (/dashboard/operator/budgets): every organization's spend against its budget, and a form to set or
// clear an organization's override of its plan's budget. The API counts in integer micro-USD; the
// pages show and take dollars.
import { useState } from 'preact/hooks';
import { html, dateTime, DataTable, ErrorNote, useAction, useConfirm, usePoll } from './components.js';

/** @typedef {import('./types.js').BudgetsOverview} BudgetsOverview */
/** @typedef {import('./types.js').KeyBudgetObject} KeyBudgetObject */
/** @typedef {import('./types.js').OrganizationBudgetObject} OrganizationBudgetObject */
/** @typedef {import('./types.js').BudgetFiguresObject} BudgetFiguresObject */

const PERIODS = ['day', 'week', 'month', 'total'];

/** 1500000 -> `$1.50`, 1234 -> `$0.001234` (exact: integer arithmetic). @param {number} microUsd */
export function dollars(microUsd) {
  const whole = Math.floor(microUsd / 1_000_000);
  const fraction = String(microUsd % 1_000_000)
    .padStart(6, '0')
    .replace(/0+$/, '');
  return `$${whole.toLocaleString('en-US')}.${fraction.length < 2 ? fraction.padEnd(2, '0') : fraction}`;
}

/**
 * `1.50` -> 1500000; undefined when it is not an amount in dollars with at most 6 decimals.
 * @param {string} text
 */
export function microUsdOf(text) {
  const match = /^\$?\s*(\d{1,9})(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!match) return undefined;
  return Number(match[1]) * 1_000_000 + Number((match[2] ?? '').padEnd(6, '0'));
}

/** @param {string | null | undefined} iso */
const resetText = (iso) => (iso ? dateTime(Date.parse(iso)) : 'never (total)');

/** "$0.21 of $5.00 per month" or "no budget". @param {Partial<BudgetFiguresObject> | null} figures */
function spendText(figures) {
  if (!figures || figures.limit_micro_usd === undefined) return 'No budget';
  return `${dollars(figures.spent_micro_usd ?? 0)} of ${dollars(figures.limit_micro_usd)} per ${figures.period}`;
}

/**
 * The dollars-and-period form of a budget: calls `onSave` with micro-USD, or says what is wrong.
 * @param {{ label: string, idPrefix: string, onSave: (body: { period: string, amount_micro_usd: number }) => Promise<unknown>,
 *   onClear?: () => void, initial?: Partial<BudgetFiguresObject> | null }} props
 */
function BudgetForm({ label, idPrefix, onSave, onClear, initial }) {
  const [problem, setProblem] = useState('');
  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(/** @type {HTMLFormElement} */ (event.currentTarget));
    const amount = microUsdOf(String(form.get('amount') ?? ''));
    if (amount === undefined || amount <= 0) {
      setProblem('Enter an amount in dollars above zero, e.g. 25 or 2.50 (at most 6 decimals).');
      return;
    }
    setProblem('');
    await onSave({ period: String(form.get('period') ?? 'month'), amount_micro_usd: amount });
  };
  return html`<form class="inline-form" aria-label=${label} onSubmit=${submit}>
    <label for=${`${idPrefix}-amount`}>Amount (USD)</label>
    <input
      id=${`${idPrefix}-amount`}
      name="amount"
      inputmode="decimal"
      required
      size="10"
      placeholder="25.00"
      defaultValue=${initial?.limit_micro_usd ? dollars(initial.limit_micro_usd).slice(1).replace(/,/g, '') : ''}
    />
    <label for=${`${idPrefix}-period`}>per</label>
    <select id=${`${idPrefix}-period`} name="period" defaultValue=${initial?.period ?? 'month'}>
      ${PERIODS.map((period) => html`<option key=${period} value=${period}>${period}</option>`)}
    </select>
    <button type="submit">Set budget</button>
    ${onClear ? html`<button type="button" class="secondary" onClick=${onClear}>Clear</button>` : null}
    ${problem ? html`<p class="error" role="alert">${problem}</p>` : null}
  </form>`;
}

/** The organization's budget card. @param {{ budget: OrganizationBudgetObject }} props */
function OrganizationCard({ budget }) {
  const has = budget.limit_micro_usd !== undefined;
  return html`<section class="card" aria-labelledby="organization-budget-title" data-testid="organization-budget">
    <h2 id="organization-budget-title">Organization budget</h2>
    ${
      has
        ? html`<dl class="figures">
            <dt>Budget</dt>
            <dd data-field="limit">${dollars(budget.limit_micro_usd ?? 0)} per ${budget.period}</dd>
            <dt>Spent</dt>
            <dd data-field="spent">${dollars(budget.spent_micro_usd ?? 0)}</dd>
            <dt>Remaining</dt>
            <dd data-field="remaining">${dollars(budget.remaining_micro_usd ?? 0)}</dd>
            <dt>Resets</dt>
            <dd data-field="reset">${resetText(budget.reset_at)}</dd>
          </dl>
          <p class="muted">
            ${budget.source === 'override' ? 'Set for your organization by an operator.' : `From your plan (${budget.plan}).`} Every key's
            spend counts against it.
          </p>`
        : html`<p>Your plan (${budget.plan}) sets no budget for the organization.</p>`
    }
  </section>`;
}

/** The owners' and members' page. @param {import('./types.js').PageProps} props */
export function BudgetsPage({ session }) {
  /** @type {[import('./components.js').Polled<BudgetsOverview>, () => void]} */
  const [{ data, error }, refresh] = usePoll('budgets', 15_000);
  const action = useAction(refresh);
  const [dialog, ask] = useConfirm();
  const [note, setNote] = useState('');
  const owner = session.role === 'owner';
  /** @param {KeyBudgetObject} row @param {{ period: string, amount_micro_usd: number }} body */
  const save = async (row, body) => {
    const done = await action.run(`budgets/keys/${encodeURIComponent(row.key)}`, { method: 'PUT', body });
    if (done) setNote(`Budget of ${row.name ?? row.prefix} set: ${dollars(body.amount_micro_usd)} per ${body.period}.`);
  };
  /** @param {KeyBudgetObject} row */
  const clear = async (row) => {
    const answer = await ask({
      title: `Clear the budget of ${row.name ?? row.prefix}?`,
      message: "Only the organization's budget then holds this key.",
      confirm: 'Clear',
      danger: true,
    });
    if (answer && (await action.run(`budgets/keys/${encodeURIComponent(row.key)}`, { method: 'DELETE' })))
      setNote(`Budget of ${row.name ?? row.prefix} cleared.`);
  };
  /** @type {import('./components.js').Column<KeyBudgetObject>[]} */
  const columns = [
    { label: 'Key', cell: (row) => html`${row.name ?? '(unnamed)'} <span class="muted">${row.prefix}</span>` },
    { label: 'Status', cell: (row) => html`<span class=${`status ${row.status}`}>${row.status}</span>` },
    { label: 'Budget', cell: (row) => (row.budget ? `${dollars(row.budget.limit_micro_usd)} per ${row.budget.period}` : '—') },
    { label: 'Spent', cell: (row) => (row.budget ? dollars(row.budget.spent_micro_usd) : '—') },
    { label: 'Remaining', cell: (row) => (row.budget ? dollars(row.budget.remaining_micro_usd) : '—') },
    { label: 'Resets', className: 'nowrap', cell: (row) => (row.budget ? resetText(row.budget.reset_at) : '—') },
  ];
  if (owner)
    columns.push({
      label: 'Set or clear',
      hideLabel: true,
      cell: (row) =>
        row.status === 'revoked'
          ? null
          : html`<${BudgetForm}
              label=${`Budget of ${row.name ?? row.prefix}`}
              idPrefix=${`key-${row.key}`}
              initial=${row.budget}
              onSave=${(/** @type {{ period: string, amount_micro_usd: number }} */ body) => save(row, body)}
              onClear=${row.budget ? () => clear(row) : undefined}
            />`,
    });
  return html`<main>
    <h1>Budgets</h1>
    <p>
      Money budgets stop requests before they cost more than allowed. A key's budget is never above the organization's.${' '}
      ${owner ? '' : 'Only owners can change them.'}
    </p>
    <${ErrorNote} error=${error ?? action.error} />
    ${note ? html`<p role="status">${note}</p>` : null}
    ${data ? html`<${OrganizationCard} budget=${data.organization} />` : null}
    <h2>Keys</h2>
    <${DataTable}
      label="Key budgets"
      columns=${columns}
      rows=${data?.keys}
      rowKey=${(/** @type {KeyBudgetObject} */ row) => row.key}
      rowProps=${(/** @type {KeyBudgetObject} */ row) => ({ 'data-key-id': row.key })}
      empty="No keys yet."
    />
    ${dialog}
  </main>`;
}

/** The operators' page: every organization's spend against its budget. */
export function OperatorBudgetsPage() {
  /** @type {[import('./components.js').Polled<{ data: OrganizationBudgetObject[] }>, () => void]} */
  const [{ data, error }, refresh] = usePoll('operator/budgets', 15_000);
  const action = useAction(refresh);
  const [note, setNote] = useState('');
  /** @param {OrganizationBudgetObject} row @param {{ period: string, amount_micro_usd: number }} body */
  const save = async (row, body) => {
    const done = await action.run(`operator/organizations/${encodeURIComponent(row.organization)}/budget`, { method: 'PUT', body });
    if (done) setNote(`Budget of ${row.organization} set: ${dollars(body.amount_micro_usd)} per ${body.period}.`);
  };
  /** @param {OrganizationBudgetObject} row */
  const clear = async (row) => {
    const done = await action.run(`operator/organizations/${encodeURIComponent(row.organization)}/budget`, { method: 'DELETE' });
    if (done) setNote(`Override of ${row.organization} cleared: its plan's budget applies.`);
  };
  /** @type {import('./components.js').Column<OrganizationBudgetObject>[]} */
  const columns = [
    { label: 'Organization', cell: (row) => row.organization },
    { label: 'Plan', cell: (row) => row.plan },
    { label: 'Spent of budget', cell: (row) => spendText(row) },
    { label: 'Remaining', cell: (row) => (row.remaining_micro_usd === undefined ? '—' : dollars(row.remaining_micro_usd)) },
    { label: 'Resets', className: 'nowrap', cell: (row) => (row.limit_micro_usd === undefined ? '—' : resetText(row.reset_at)) },
    {
      label: 'Source',
      cell: (row) =>
        row.source === 'override'
          ? `override${row.plan_budget ? ` (plan: ${dollars(row.plan_budget.limit_micro_usd)} per ${row.plan_budget.period})` : ''}`
          : row.source,
    },
    {
      label: 'Set or clear',
      hideLabel: true,
      cell: (row) => html`<${BudgetForm}
        label=${`Budget of ${row.organization}`}
        idPrefix=${`org-${row.organization}`}
        initial=${row.limit_micro_usd === undefined ? null : row}
        onSave=${(/** @type {{ period: string, amount_micro_usd: number }} */ body) => save(row, body)}
        onClear=${row.source === 'override' ? () => clear(row) : undefined}
      />`,
    },
  ];
  return html`<main>
    <h1>Budgets</h1>
    <p>Every organization's spend against its budget (its plan's, or the override set here). Clearing an override restores the plan's.</p>
    <${ErrorNote} error=${error ?? action.error} />
    ${note ? html`<p role="status">${note}</p>` : null}
    <${DataTable}
      label="Organization budgets"
      columns=${columns}
      rows=${data?.data}
      rowKey=${(/** @type {OrganizationBudgetObject} */ row) => row.organization}
      rowProps=${(/** @type {OrganizationBudgetObject} */ row) => ({ 'data-organization': row.organization })}
      empty="No organizations yet."
    />
  </main>`;
}
