// @ts-check
// Budget alerts: webhook endpoints (add one, its signing secret shown once; send a test sample; delete)
// and the delivery log (every email and webhook with its status, attempts and last error, filtered by
// status). Owners see their organization's (/dashboard/alerts); operators their own endpoints, which
// receive every organization's alerts, and every organization's deliveries (/dashboard/operator/alerts).
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { html, dateTime, DataTable, ErrorNote, LoadMore, ShownOnce, useAction, useConfirm, usePaged, usePoll } from './components.js';

/** @typedef {import('./types.js').WebhookEndpointObject} WebhookEndpointObject */
/** @typedef {import('./types.js').CreatedWebhookEndpointObject} CreatedWebhookEndpointObject */
/** @typedef {import('./types.js').WebhookEndpointsList} WebhookEndpointsList */
/** @typedef {import('./types.js').AlertDeliveryObject} AlertDeliveryObject */

/** Event types an endpoint subscribes to (the test sample is sent by its button, whatever it takes). */
const SUBSCRIBABLE = ['budget.threshold_reached', 'budget.projected_to_exceed'];

/** @param {{ created: CreatedWebhookEndpointObject, onDone: () => void }} props */
function NewEndpointSecret({ created, onDone }) {
  const note = html`This is the only time the secret is shown. Your endpoint checks each delivery's <code>webhook-signature</code> with
    it (Standard Webhooks); keep it with the endpoint's code.`;
  return html`<${ShownOnce}
    title=${`Signing secret of ${created.url}`}
    note=${note}
    secret=${created.secret}
    testId="new-webhook-secret"
    copyLabel="Copy the secret"
    onDone=${onDone}
  />`;
}

/** @param {{ base: string, list: WebhookEndpointsList, onCreated: (created: CreatedWebhookEndpointObject) => void }} props */
function EndpointForm({ base, list, onCreated }) {
  const [error, setError] = useState(/** @type {Error | undefined} */ (undefined));
  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const element = /** @type {HTMLFormElement} */ (event.currentTarget);
    const form = new FormData(element);
    const events = SUBSCRIBABLE.filter((name) => form.get(`event-${name}`) === 'on');
    const description = String(form.get('description') ?? '').trim();
    try {
      const created = await api(`${base}webhooks`, {
        method: 'POST',
        body: { url: String(form.get('url') ?? '').trim(), events, ...(description ? { description } : {}) },
      });
      element.reset();
      setError(undefined);
      onCreated(created);
    } catch (caught) {
      setError(/** @type {Error} */ (caught));
    }
  };
  return html`<form onSubmit=${submit} aria-label="Add a webhook endpoint" class="card">
    <h2>Add a webhook endpoint</h2>
    <label for="webhook-url">URL</label>
    <input id="webhook-url" name="url" type="url" required maxlength="2048" placeholder="https://hooks.example.com/switchyard" />
    <p class="muted">${list.allow_http ? 'https:// (http:// is allowed on this server).' : 'https:// only, to a public address.'}</p>
    <fieldset>
      <legend>Events</legend>
      <div class="checks">
        ${SUBSCRIBABLE.map(
          (name) => html`<label key=${name} class="check">
            <input type="checkbox" name=${`event-${name}`} defaultChecked=${true} />
            ${' '}${name}
          </label>`,
        )}
      </div>
    </fieldset>
    <label for="webhook-description">Description (optional)</label>
    <input id="webhook-description" name="description" maxlength="200" placeholder="e.g. on-call pager" />
    <button type="submit">Add endpoint</button>
    <${ErrorNote} error=${error} />
  </form>`;
}

/**
 * @param {{ test: (endpoint: WebhookEndpointObject) => void, remove: (endpoint: WebhookEndpointObject) => void }} actions
 * @returns {import('./components.js').Column<WebhookEndpointObject>[]}
 */
function endpointColumns({ test, remove }) {
  return [
    { label: 'URL', className: 'break', cell: (endpoint) => html`${endpoint.url} <span class="muted">${endpoint.id}</span>` },
    { label: 'Events', cell: (endpoint) => endpoint.events.join(', ') },
    { label: 'Description', cell: (endpoint) => endpoint.description ?? '—' },
    {
      label: 'Added',
      className: 'nowrap',
      cell: (endpoint) => html`${dateTime(endpoint.created_at)} <span class="muted">${endpoint.created_by}</span>`,
    },
    {
      label: 'Actions',
      hideLabel: true,
      className: 'actions',
      cell: (
        endpoint,
      ) => html`<button type="button" class="secondary" onClick=${() => test(endpoint)} aria-label=${`Send a test to ${endpoint.url}`}>
          Send test
        </button>
        <button type="button" class="danger" onClick=${() => remove(endpoint)} aria-label=${`Delete ${endpoint.url}`}>Delete</button>`,
    },
  ];
}

/** @param {boolean} everyOrganization @returns {import('./components.js').Column<AlertDeliveryObject>[]} */
function deliveryColumns(everyOrganization) {
  /** @type {import('./components.js').Column<AlertDeliveryObject>[]} */
  const columns = [
    { label: 'Queued', className: 'nowrap', cell: (delivery) => dateTime(delivery.created_at) },
    { label: 'Event', cell: (delivery) => html`${delivery.summary} <span class="muted">${delivery.event_type}</span>` },
    { label: 'To', className: 'break', cell: (delivery) => html`${delivery.kind}: ${delivery.target}` },
    { label: 'Status', cell: (delivery) => html`<span class=${`status ${delivery.status}`}>${delivery.status}</span>` },
    { label: 'Attempts', cell: (delivery) => String(delivery.attempts) },
    { label: 'Last error', cell: (delivery) => delivery.last_error ?? '—' },
    {
      label: 'Next attempt',
      className: 'nowrap',
      cell: (delivery) => (delivery.next_attempt_at === null ? '—' : dateTime(delivery.next_attempt_at)),
    },
  ];
  if (everyOrganization) columns.splice(1, 0, { label: 'Organization', cell: (delivery) => delivery.organization ?? '(operators)' });
  return columns;
}

/** The delivery log with its filters. @param {{ base: string, everyOrganization: boolean }} props */
function DeliveryLog({ base, everyOrganization }) {
  const [status, setStatus] = useState('');
  const [organization, setOrganization] = useState('');
  const filters = [status ? `status=${status}` : '', organization ? `organization=${encodeURIComponent(organization)}` : ''].filter(
    Boolean,
  );
  const path = `${base}alert-deliveries${filters.length > 0 ? `?${filters.join('&')}` : ''}`;
  /** @type {import('./components.js').Paged<AlertDeliveryObject>} */
  const paged = usePaged(path, '', 5_000);
  /** @param {SubmitEvent} event */
  const filter = (event) => {
    event.preventDefault();
    const form = new FormData(/** @type {HTMLFormElement} */ (event.currentTarget));
    setStatus(String(form.get('status') ?? ''));
    setOrganization(String(form.get('organization') ?? '').trim());
  };
  return html`<section aria-labelledby="deliveries-title">
    <h2 id="deliveries-title">Deliveries</h2>
    <form class="toolbar" aria-label="Filter deliveries" onSubmit=${filter}>
      <label for="delivery-status">Status</label>
      <select id="delivery-status" name="status">
        <option value="">all</option>
        <option value="pending">pending</option>
        <option value="delivered">delivered</option>
        <option value="failed">failed</option>
      </select>
      ${
        everyOrganization
          ? html`<label for="delivery-organization">Organization</label>
              <input id="delivery-organization" name="organization" placeholder="org-..." />`
          : null
      }
      <button type="submit">Filter</button>
    </form>
    <${ErrorNote} error=${paged.error} />
    <${DataTable}
      label="Alert deliveries"
      columns=${deliveryColumns(everyOrganization)}
      rows=${paged.rows}
      rowKey=${(/** @type {AlertDeliveryObject} */ delivery) => delivery.id}
      rowProps=${(/** @type {AlertDeliveryObject} */ delivery) => ({ 'data-delivery-id': delivery.id })}
      empty=${filters.length > 0 ? 'No delivery matches.' : 'No alerts sent yet.'}
    />
    <${LoadMore} paged=${paged} label="deliveries" />
  </section>`;
}

/** @param {{ base: string, everyOrganization: boolean, intro: string }} props */
function AlertsArea({ base, everyOrganization, intro }) {
  /** @type {[import('./components.js').Polled<WebhookEndpointsList>, () => void]} */
  const [{ data: list, error }, refresh] = usePoll(`${base}webhooks`, 30_000);
  const [created, setCreated] = useState(/** @type {CreatedWebhookEndpointObject | undefined} */ (undefined));
  const [note, setNote] = useState('');
  // Each test sample remounts the delivery log (its `key`), which loads it again at once.
  const [tests, setTests] = useState(0);
  const action = useAction(refresh);
  const [dialog, ask] = useConfirm();
  /** @param {WebhookEndpointObject} endpoint */
  const test = async (endpoint) => {
    const queued = await action.run(`${base}webhooks/${endpoint.id}/test`);
    if (queued) {
      setNote(`A test event is on its way to ${endpoint.url}: see its delivery below.`);
      setTests((count) => count + 1);
    }
  };
  /** @param {WebhookEndpointObject} endpoint */
  const remove = async (endpoint) => {
    const answer = await ask({
      title: `Delete ${endpoint.url}?`,
      message: 'It receives nothing more; its deliveries still waiting are marked failed.',
      confirm: 'Delete',
      danger: true,
    });
    if (answer) action.run(`${base}webhooks/${endpoint.id}`, { method: 'DELETE' });
  };
  return html`<main>
    <h1>Alerts</h1>
    <p>${intro}</p>
    ${list && !list.mail_configured ? html`<p class="notice">Mail is not configured on this server (SMTP_URL): alert emails are listed as not sent.</p>` : null}
    ${created ? html`<${NewEndpointSecret} created=${created} onDone=${() => setCreated(undefined)} />` : null}
    <${ErrorNote} error=${error ?? action.error} />
    ${note ? html`<p role="status">${note}</p>` : null}
    ${list ? html`<${EndpointForm} base=${base} list=${list} onCreated=${(/** @type {CreatedWebhookEndpointObject} */ value) => (setCreated(value), refresh())} />` : null}
    <${DataTable}
      label="Webhook endpoints"
      columns=${endpointColumns({ test, remove })}
      rows=${list?.data}
      rowKey=${(/** @type {WebhookEndpointObject} */ endpoint) => endpoint.id}
      empty="No webhook endpoints yet."
    />
    <${DeliveryLog} key=${tests} base=${base} everyOrganization=${everyOrganization} />
    ${dialog}
  </main>`;
}

/** The owners' page. */
export function AlertsPage() {
  return html`<${AlertsArea}
    base=""
    everyOrganization=${false}
    intro="Budget alerts (50%, 80% and 100% of a budget, and a projected overrun) are emailed to your organization's owners and sent, signed, to these endpoints."
  />`;
}

/** The operators' page. */
export function OperatorAlertsPage() {
  return html`<${AlertsArea}
    base="operator/"
    everyOrganization=${true}
    intro="Operator endpoints receive every organization's budget alerts. The log lists every organization's deliveries."
  />`;
}
