// The owners' dashboard: Preact + htm components, bundled with uPlot by scripts/build-dashboard.mjs.
// Path routing under /dashboard; every control has a label and works from the keyboard.
import { h, render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { api, setCsrfToken, signInPath } from './api.js';

const html = htm.bind(h);

function navigate(path) {
  history.pushState(null, '', path);
  window.dispatchEvent(new Event('popstate'));
}

function Link({ href, children, ...rest }) {
  const onClick = (event) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(href);
  };
  return html`<a href=${href} onClick=${onClick} ...${rest}>${children}</a>`;
}

const day = (ms) => (ms === null || ms === undefined ? '—' : new Date(ms).toISOString().slice(0, 10));
const dateTime = (ms) => (ms === null || ms === undefined ? '—' : new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC');
const number = (value) => Number(value).toLocaleString('en-US');
const usd = (value) => `$${Number(value).toFixed(4)}`;
const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

function ErrorNote({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error.message}</p>`;
}

function usePoll(load, intervalMs) {
  const [state, setState] = useState({ data: undefined, error: undefined });
  const refresh = useCallback(
    () =>
      load().then(
        (data) => setState({ data, error: undefined }),
        (error) => setState((old) => ({ ...old, error })),
      ),
    [load],
  );
  useEffect(() => {
    refresh();
    if (!intervalMs) return undefined;
    const timer = setInterval(refresh, intervalMs);
    return () => clearInterval(timer);
  }, [refresh, intervalMs]);
  return [state, refresh];
}

// ---- sign-in and set-password ----

function SignIn({ onSignedIn }) {
  const params = new URLSearchParams(location.search);
  const reason = params.get('reason');
  const [error, setError] = useState(undefined);
  const [needTotp, setNeedTotp] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    try {
      const session = await api('sign-in', {
        method: 'POST',
        body: { email: form.get('email'), password: form.get('password'), ...(form.get('totp') ? { totp: form.get('totp') } : {}) },
        redirectOn401: false,
      });
      const next = params.get('next');
      onSignedIn(session, next && next.startsWith('/dashboard/') && !next.startsWith('//') ? next : '/dashboard/keys');
    } catch (caught) {
      if (caught.code === 'totp_required') setNeedTotp(true);
      setError(caught);
    }
  };
  return html`<main class="narrow">
    <h1>Sign in</h1>
    ${reason === 'session_expired' ? html`<p class="notice" role="status">Your session expired. Sign in again to go back where you were.</p>` : null}
    ${reason === 'invalid_token' ? html`<p class="notice" role="status">Please sign in.</p>` : null}
    <form onSubmit=${submit} aria-label="Sign in">
      <label for="email">Email</label>
      <input id="email" name="email" type="email" autocomplete="username" required />
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required />
      ${needTotp ? html`<label for="totp">Authenticator code</label><input id="totp" name="totp" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required />` : null}
      <button type="submit">Sign in</button>
    </form>
    <${ErrorNote} error=${error} />
  </main>`;
}

function SetPassword({ onSignedIn }) {
  const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
  const [error, setError] = useState(undefined);
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    if (form.get('password') !== form.get('confirm')) return setError(new Error('The two passwords differ.'));
    try {
      const session = await api('set-password', { method: 'POST', body: { token, password: form.get('password') }, redirectOn401: false });
      onSignedIn(session, '/dashboard/keys');
    } catch (caught) {
      setError(caught);
    }
  };
  return html`<main class="narrow">
    <h1>Choose a password</h1>
    <form onSubmit=${submit} aria-label="Set password">
      <label for="new-password">New password (at least 10 characters)</label>
      <input id="new-password" name="password" type="password" autocomplete="new-password" minlength="10" required />
      <label for="confirm-password">Repeat it</label>
      <input id="confirm-password" name="confirm" type="password" autocomplete="new-password" minlength="10" required />
      <button type="submit">Set password and sign in</button>
    </form>
    <${ErrorNote} error=${error} />
  </main>`;
}

// ---- keys ----

function CopyButton({ text }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return html`<button type="button" onClick=${copy} aria-label="Copy the key">${copied ? 'Copied' : 'Copy'}</button>`;
}

function NewSecret({ created, onDone }) {
  return html`<section class="secret" aria-live="polite" aria-labelledby="secret-title">
    <h2 id="secret-title">Your new key ${created.name ? `“${created.name}”` : ''}</h2>
    <p>This is the only time the key is shown. Copy it now and keep it safe.</p>
    <p><code data-testid="new-key" class="key">${created.key}</code> <${CopyButton} text=${created.key} /></p>
    <button type="button" onClick=${onDone}>Done</button>
  </section>`;
}

function CreateKeyForm({ tiers, permissions, onCreated, readOnly }) {
  const [error, setError] = useState(undefined);
  const [tier, setTier] = useState(tiers[0]?.name ?? '');
  const tierPermissions = tiers.find((entry) => entry.name === tier)?.permissions ?? [];
  const submit = async (event) => {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    const chosen = permissions.filter((name) => form.get(`permission-${name}`) === 'on');
    const days = form.get('expires');
    try {
      const created = await api('keys', {
        method: 'POST',
        body: { name: form.get('name'), tier, permissions: chosen, expires_in_days: days ? Number(days) : null },
      });
      element.reset();
      setError(undefined);
      onCreated(created);
    } catch (caught) {
      setError(caught);
    }
  };
  if (readOnly) return html`<p>Members can see keys; an owner creates them.</p>`;
  return html`<form onSubmit=${submit} aria-label="Create a key" class="card">
    <h2>Create a key</h2>
    <label for="key-name">Name</label>
    <input id="key-name" name="name" required maxlength="100" placeholder="e.g. production backend" />
    <label for="key-tier">Tier</label>
    <select id="key-tier" name="tier" value=${tier} onChange=${(event) => setTier(event.currentTarget.value)}>
      ${tiers.map((entry) => html`<option value=${entry.name}>${entry.name}</option>`)}
    </select>
    <fieldset>
      <legend>Permissions</legend>
      <div class="checks">
        ${permissions.map(
          (name) =>
            html`<label key=${`${tier}-${name}`} class="check"
              ><input type="checkbox" name=${`permission-${name}`} defaultChecked=${tierPermissions.includes(name)} /> ${name}</label
            >`,
        )}
      </div>
    </fieldset>
    <label for="key-expires">Expires after (days, empty for never)</label>
    <input id="key-expires" name="expires" type="number" min="1" max="3650" />
    <button type="submit">Create key</button>
    <${ErrorNote} error=${error} />
  </form>`;
}

function KeysPage({ session }) {
  const load = useCallback(() => api('keys'), []);
  const [{ data, error }, refresh] = usePoll(load, 10_000);
  const [created, setCreated] = useState(undefined);
  const [actionError, setActionError] = useState(undefined);
  const readOnly = session.role !== 'owner';
  const act = async (path, body) => {
    try {
      const result = await api(path, { method: 'POST', body });
      setActionError(undefined);
      if (result.key) setCreated(result);
      refresh();
    } catch (caught) {
      setActionError(caught);
    }
  };
  const rotate = (key) => {
    const grace = window.prompt(`Rotate ${key.name ?? key.id}: how many minutes may the old key keep working?`, '60');
    if (grace === null) return;
    act(`keys/${key.id}/rotate`, { grace_seconds: Math.max(0, Math.round(Number(grace) * 60)) || 0 });
  };
  const revoke = (key) => {
    if (window.confirm(`Revoke ${key.name ?? key.id}? Requests with it fail at once.`)) act(`keys/${key.id}/revoke`);
  };
  return html`<main>
    <h1>API keys</h1>
    ${created ? html`<${NewSecret} created=${created} onDone=${() => setCreated(undefined)} />` : null}
    <${ErrorNote} error=${error ?? actionError} />
    ${
      data
        ? html`<${CreateKeyForm}
              tiers=${data.allowed_tiers}
              permissions=${data.permissions}
              onCreated=${(result) => {
                setCreated(result);
                refresh();
              }}
              readOnly=${readOnly}
            />
            <div class="table-wrap">
              <table aria-label="API keys">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key</th>
                    <th scope="col">Tier</th>
                    <th scope="col">Permissions</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Status</th>
                    <th scope="col"><span class="visually-hidden">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  ${
                    data.data.length === 0
                      ? html`<tr>
                          <td colspan="9">No keys yet.</td>
                        </tr>`
                      : null
                  }
                  ${data.data.map(
                    (key) =>
                      html`<tr key=${key.id} data-key-id=${key.id}>
                        <td>${key.name ?? '—'}</td>
                        <td><code>${key.prefix}</code></td>
                        <td>${key.tier}</td>
                        <td class="permissions">${key.permissions.join(', ')}</td>
                        <td class="nowrap">${day(key.created_at)}</td>
                        <td class="nowrap">${day(key.last_used_day)}</td>
                        <td>${key.expires_at ? dateTime(key.expires_at) : 'never'}</td>
                        <td><span class=${`status ${key.status}`}>${key.status}</span></td>
                        <td class="actions">
                          ${
                            key.status === 'active' && !readOnly
                              ? html`<button type="button" onClick=${() => rotate(key)} aria-label=${`Rotate ${key.name ?? key.id}`}>
                                    Rotate
                                  </button>
                                  <button
                                    type="button"
                                    class="danger"
                                    onClick=${() => revoke(key)}
                                    aria-label=${`Revoke ${key.name ?? key.id}`}
                                  >
                                    Revoke
                                  </button>`
                              : null
                          }
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>
            </div>`
        : html`<p>Loading…</p>`
    }
  </main>`;
}

// ---- usage ----

function UsageChart({ rows, from, to }) {
  const container = useRef(null);
  useEffect(() => {
    if (!container.current) return undefined;
    const dayMs = 86_400_000;
    const start = Date.parse(`${from}T00:00:00Z`);
    const end = Date.parse(`${to}T00:00:00Z`);
    const days = [];
    for (let at = start; at <= end; at += dayMs) days.push(at);
    const index = new Map(days.map((at, position) => [new Date(at).toISOString().slice(0, 10), position]));
    const tokens = days.map(() => 0);
    const cost = days.map(() => 0);
    for (const row of rows) {
      const position = index.get(row.date);
      if (position === undefined) continue;
      tokens[position] += row.input_tokens + row.output_tokens;
      cost[position] += row.cost_usd;
    }
    const width = Math.max(280, container.current.clientWidth);
    const chart = new uPlot(
      {
        width,
        height: 240,
        series: [
          {},
          { label: 'Tokens', stroke: '#2563eb', fill: 'rgba(37,99,235,0.12)', scale: 'tokens' },
          { label: 'Cost (USD)', stroke: '#b45309', scale: 'usd', value: (_u, value) => (value === null ? '—' : `$${value.toFixed(4)}`) },
        ],
        axes: [
          {},
          { scale: 'tokens', size: 56, values: (_u, ticks) => ticks.map((tick) => compact.format(tick)) },
          { scale: 'usd', side: 1, size: 64, grid: { show: false }, values: (_u, ticks) => ticks.map((tick) => `$${tick}`) },
        ],
      },
      [days.map((at) => at / 1000), tokens, cost],
      container.current,
    );
    return () => chart.destroy();
  }, [rows, from, to]);
  return html`<figure class="chart">
    <div ref=${container} role="img" aria-label="Tokens and cost per day"></div>
    <figcaption>Tokens (left axis) and cost (right axis) per day, UTC.</figcaption>
  </figure>`;
}

function LimitMeter({ label, info }) {
  const unlimited = info.limit === 0;
  return html`<div class="meter">
    <h3>${label}</h3>
    <p>
      <strong data-testid=${`usage-${label.toLowerCase().replace(/[^a-z]+/g, '-')}`}>${number(info.used)}</strong> tokens used
      ${unlimited ? '(no limit)' : `of ${number(info.limit)}`}
    </p>
    ${unlimited ? null : html`<progress max=${info.limit} value=${Math.min(info.used, info.limit)} aria-label=${`${label}: ${info.used} of ${info.limit} tokens`}></progress>`}
    <p class="muted">Resets ${dateTime(Date.parse(info.reset_at))}</p>
  </div>`;
}

function UsagePage() {
  const [days, setDays] = useState(30);
  const load = useCallback(() => api(`usage?days=${days}`), [days]);
  const [{ data, error }] = usePoll(load, 15_000);
  return html`<main>
    <h1>Usage</h1>
    <${ErrorNote} error=${error} />
    ${
      data
        ? html`<section class="meters" aria-label="Usage against limits">
              <${LimitMeter} label="Today" info=${data.limits.daily} />
              <${LimitMeter} label="This month" info=${data.limits.monthly} />
              <p class="muted">Limits of the ${data.limits.tier} tier, shared by every key of ${data.organization}.</p>
            </section>
            <div class="toolbar">
              <label for="range">Range</label>
              <select id="range" value=${days} onChange=${(event) => setDays(Number(event.currentTarget.value))}>
                <option value="7">Last 7 days</option>
                <option value="30">Last 30 days</option>
                <option value="90">Last 90 days</option>
                <option value="365">Last 365 days</option>
              </select>
              <a class="button" href=${`/dashboard/api/usage.csv?days=${days}`} download>Export CSV</a>
            </div>
            <${UsageChart} rows=${data.data} from=${data.from} to=${data.to} />
            <div class="table-wrap">
              <table aria-label="Usage per day and model">
                <thead>
                  <tr>
                    <th scope="col">Date</th>
                    <th scope="col">Model</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Input tokens</th>
                    <th scope="col">Output tokens</th>
                    <th scope="col">Cost</th>
                  </tr>
                </thead>
                <tbody>
                  ${
                    data.data.length === 0
                      ? html`<tr>
                          <td colspan="6">No usage in this range.</td>
                        </tr>`
                      : null
                  }
                  ${data.data
                    .slice()
                    .reverse()
                    .map(
                      (row) =>
                        html`<tr key=${`${row.date}-${row.model}`}>
                          <td>${row.date}</td>
                          <td>${row.model}</td>
                          <td>${number(row.requests)}</td>
                          <td>${number(row.input_tokens)}</td>
                          <td>${number(row.output_tokens)}</td>
                          <td>${usd(row.cost_usd)}</td>
                        </tr>`,
                    )}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row" colspan="2">Total</th>
                    <td>${number(data.totals.requests)}</td>
                    <td>${number(data.totals.input_tokens)}</td>
                    <td>${number(data.totals.output_tokens)}</td>
                    <td>${usd(data.totals.cost_usd)}</td>
                  </tr>
                </tfoot>
              </table>
            </div>`
        : html`<p>Loading…</p>`
    }
  </main>`;
}

// ---- batches and files ----

function BatchesPage({ session }) {
  const load = useCallback(() => api('batches'), []);
  const [{ data, error }, refresh] = usePoll(load, 10_000);
  const [actionError, setActionError] = useState(undefined);
  const cancel = async (batch) => {
    try {
      await api(`batches/${batch.id}/cancel`, { method: 'POST' });
      refresh();
    } catch (caught) {
      setActionError(caught);
    }
  };
  return html`<main>
    <h1>Batches</h1>
    <${ErrorNote} error=${error ?? actionError} />
    ${
      data
        ? html`<div class="table-wrap">
            <table aria-label="Batches">
              <thead>
                <tr>
                  <th scope="col">Batch</th>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Status</th>
                  <th scope="col">Progress</th>
                  <th scope="col">Created</th>
                  <th scope="col">Files</th>
                  <th scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${
                  data.data.length === 0
                    ? html`<tr>
                        <td colspan="7">No batches.</td>
                      </tr>`
                    : null
                }
                ${data.data.map((batch) => {
                  const counts = batch.request_counts;
                  return html`<tr key=${batch.id}>
                    <td><${Link} href=${`/dashboard/batches/${batch.id}`}>${batch.id}<//></td>
                    <td>${batch.endpoint}</td>
                    <td>${batch.status}</td>
                    <td>
                      <progress
                        max=${Math.max(1, counts.total)}
                        value=${counts.completed + counts.failed}
                        aria-label=${`${counts.completed + counts.failed} of ${counts.total} requests done`}
                      ></progress>
                      ${counts.completed + counts.failed}/${counts.total}
                    </td>
                    <td>${dateTime(batch.created_at * 1000)}</td>
                    <td>
                      ${batch.output_file_id ? html`<a href=${`/dashboard/api/files/${batch.output_file_id}/content`}>output</a> ` : null}${batch.error_file_id ? html`<a href=${`/dashboard/api/files/${batch.error_file_id}/content`}>errors</a>` : null}
                    </td>
                    <td>
                      ${(batch.status === 'validating' || batch.status === 'in_progress') && session.role === 'owner' ? html`<button type="button" class="danger" onClick=${() => cancel(batch)} aria-label=${`Cancel ${batch.id}`}>Cancel</button>` : null}
                    </td>
                  </tr>`;
                })}
              </tbody>
            </table>
          </div>`
        : html`<p>Loading…</p>`
    }
  </main>`;
}

function BatchPage({ id }) {
  const load = useCallback(() => api(`batches/${encodeURIComponent(id)}`), [id]);
  const [{ data, error }] = usePoll(load, 5_000);
  return html`<main>
    <p><${Link} href="/dashboard/batches">← All batches<//></p>
    <h1>Batch ${id}</h1>
    <${ErrorNote} error=${error} />
    ${
      data
        ? html`<dl class="facts">
              <dt>Status</dt>
              <dd>${data.status}</dd>
              <dt>Endpoint</dt>
              <dd>${data.endpoint}</dd>
              <dt>Requests</dt>
              <dd>${data.request_counts.total} total, ${data.request_counts.completed} completed, ${data.request_counts.failed} failed</dd>
              <dt>Input file</dt>
              <dd><a href=${`/dashboard/api/files/${data.input_file_id}/content`}>${data.input_file_id}</a></dd>
              <dt>Output file</dt>
              <dd>
                ${data.output_file_id ? html`<a href=${`/dashboard/api/files/${data.output_file_id}/content`}>${data.output_file_id}</a>` : '—'}
              </dd>
              <dt>Error file</dt>
              <dd>
                ${data.error_file_id ? html`<a href=${`/dashboard/api/files/${data.error_file_id}/content`}>${data.error_file_id}</a>` : '—'}
              </dd>
            </dl>
            ${
              data.errors?.data?.length
                ? html`<h2>Errors</h2>
                    <ul>
                      ${data.errors.data.map((entry) => html`<li>${entry.line ? `Line ${entry.line}: ` : ''}${entry.code}: ${entry.message}</li>`)}
                    </ul>`
                : null
            }`
        : html`<p>Loading…</p>`
    }
  </main>`;
}

function FilesPage({ session }) {
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
        ? html`<div class="table-wrap">
            <table aria-label="Files">
              <thead>
                <tr>
                  <th scope="col">File</th>
                  <th scope="col">Purpose</th>
                  <th scope="col">Size</th>
                  <th scope="col">Created</th>
                  <th scope="col"><span class="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${
                  data.data.length === 0
                    ? html`<tr>
                        <td colspan="5">No files.</td>
                      </tr>`
                    : null
                }
                ${data.data.map(
                  (file) =>
                    html`<tr key=${file.id}>
                      <td>${file.filename} <span class="muted">${file.id}</span></td>
                      <td>${file.purpose}</td>
                      <td>${number(file.bytes)} bytes</td>
                      <td>${dateTime(file.created_at * 1000)}</td>
                      <td class="actions">
                        <a class="button" href=${`/dashboard/api/files/${file.id}/content`} aria-label=${`Download ${file.filename}`}
                          >Download</a
                        >
                        ${session.role === 'owner' ? html`<button type="button" class="danger" onClick=${() => remove(file)} aria-label=${`Delete ${file.filename}`}>Delete</button>` : null}
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : html`<p>Loading…</p>`
    }
  </main>`;
}

// ---- models, getting started, audit, account ----

function ModelsPage() {
  const load = useCallback(() => api('models'), []);
  const [{ data, error }] = usePoll(load, 0);
  const base = `${location.origin}/v1`;
  const model = data?.data.find((entry) => entry.capabilities.includes('chat'))?.id ?? 'MODEL';
  const snippets = {
    curl: `curl ${base}/chat/completions \\\n  -H "Authorization: Bearer $SWITCHYARD_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`,
    openai: `import OpenAI from 'openai';\nconst client = new OpenAI({ baseURL: '${base}', apiKey: process.env.SWITCHYARD_API_KEY });\nconst answer = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Hello' }] });\nconsole.log(answer.choices[0].message.content);`,
    anthropic: `import Anthropic from '@anthropic-ai/sdk';\nconst client = new Anthropic({ baseURL: '${location.origin}', apiKey: process.env.SWITCHYARD_API_KEY });\nconst message = await client.messages.create({ model: '${model}', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] });\nconsole.log(message.content);`,
  };
  return html`<main>
    <h1>Models</h1>
    <section class="card" aria-labelledby="start-title">
      <h2 id="start-title">Getting started</h2>
      ${Object.entries(snippets).map(
        ([name, code]) =>
          html`<h3>${name}</h3>
            <pre><code>${code}</code></pre>`,
      )}
    </section>
    <${ErrorNote} error=${error} />
    ${
      data
        ? html`<div class="table-wrap">
            <table aria-label="Models">
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">Capabilities</th>
                  <th scope="col">Context</th>
                  <th scope="col">Input / 1M</th>
                  <th scope="col">Output / 1M</th>
                </tr>
              </thead>
              <tbody>
                ${data.data.map(
                  (entry) =>
                    html`<tr key=${entry.id}>
                      <td><code>${entry.id}</code>${entry.description ? html`<div class="muted">${entry.description}</div>` : null}</td>
                      <td>${entry.capabilities.join(', ')}</td>
                      <td>${number(entry.context_window)}</td>
                      <td>${usd(entry.pricing.input_per_million)}</td>
                      <td>${usd(entry.pricing.output_per_million)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : null
    }
  </main>`;
}

function AuditPage() {
  const load = useCallback(() => api('audit'), []);
  const [{ data, error }] = usePoll(load, 15_000);
  return html`<main>
    <h1>Audit log</h1>
    <${ErrorNote} error=${error} />
    ${
      data
        ? html`<div class="table-wrap">
            <table aria-label="Audit log">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Who</th>
                  <th scope="col">What</th>
                  <th scope="col">Target</th>
                  <th scope="col">From</th>
                </tr>
              </thead>
              <tbody>
                ${data.data.map(
                  (entry) =>
                    html`<tr key=${entry.id}>
                      <td>${dateTime(entry.created_at)}</td>
                      <td>${entry.actor}</td>
                      <td>${entry.action}</td>
                      <td>${entry.target ?? '—'}</td>
                      <td>${entry.address ?? '—'}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : null
    }
  </main>`;
}

function AccountPage({ session, onSignedOut, onChanged }) {
  const load = useCallback(() => api('sessions'), []);
  const [{ data, error }, refresh] = usePoll(load, 0);
  const [enrolment, setEnrolment] = useState(undefined);
  const [actionError, setActionError] = useState(undefined);
  const run = async (path, body) => {
    try {
      const result = await api(path, { method: 'POST', body });
      setActionError(undefined);
      return result;
    } catch (caught) {
      setActionError(caught);
      return undefined;
    }
  };
  const enable = async (event) => {
    event.preventDefault();
    const code = new FormData(event.currentTarget).get('code');
    if (await run('totp/enable', { secret: enrolment.secret, code })) {
      setEnrolment(undefined);
      onChanged();
    }
  };
  return html`<main>
    <h1>Account</h1>
    <p>${session.email} · ${session.role} of ${session.organization}</p>
    <${ErrorNote} error=${error ?? actionError} />
    <section class="card" aria-labelledby="totp-title">
      <h2 id="totp-title">Two-factor sign-in</h2>
      ${
        session.totp_enabled
          ? html`<p>An authenticator code is required at sign-in.</p>
              <button type="button" onClick=${async () => (await run('totp/disable')) && onChanged()}>Turn off</button>`
          : enrolment
            ? html`<form onSubmit=${enable} aria-label="Confirm authenticator">
                <p>Add this secret to your authenticator app: <code>${enrolment.secret}</code></p>
                <p class="muted break">${enrolment.uri}</p>
                <label for="totp-code">Code from the app</label
                ><input id="totp-code" name="code" inputmode="numeric" pattern="[0-9]{6}" required /><button type="submit">Turn on</button>
              </form>`
            : html`<button type="button" onClick=${async () => setEnrolment(await run('totp/enrol'))}>Set up an authenticator</button>`
      }
    </section>
    <section class="card" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Signed-in sessions</h2>
      <ul class="sessions">
        ${(data?.data ?? []).map(
          (entry) =>
            html`<li key=${entry.id}>
              ${entry.user_agent ?? 'unknown browser'} · ${entry.address ?? ''} · since ${dateTime(entry.created_at)}
              ${entry.current ? html`<strong>(this one)</strong>` : html`<button type="button" onClick=${async () => (await run(`sessions/${entry.id}/revoke`)) && refresh()}>Sign out</button>`}
            </li>`,
        )}
      </ul>
      <button type="button" class="danger" onClick=${async () => (await run('sessions/revoke-all')) && onSignedOut()}>
        Sign out everywhere
      </button>
    </section>
  </main>`;
}

// ---- shell ----

const NAVIGATION = [
  ['/dashboard/keys', 'Keys'],
  ['/dashboard/usage', 'Usage'],
  ['/dashboard/batches', 'Batches'],
  ['/dashboard/files', 'Files'],
  ['/dashboard/models', 'Models'],
  ['/dashboard/audit', 'Audit log'],
  ['/dashboard/account', 'Account'],
];

function App() {
  const [path, setPath] = useState(location.pathname);
  const [session, setSession] = useState(undefined);
  const [checked, setChecked] = useState(false);
  const isPublic = path.startsWith('/dashboard/sign-in') || path.startsWith('/dashboard/set-password');

  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    const onSignedOut = (event) => {
      setSession(undefined);
      const target = signInPath(event.detail);
      history.replaceState(null, '', target);
      setPath(location.pathname);
    };
    window.addEventListener('popstate', onPop);
    window.addEventListener('dashboard:signed-out', onSignedOut);
    return () => {
      window.removeEventListener('popstate', onPop);
      window.removeEventListener('dashboard:signed-out', onSignedOut);
    };
  }, []);

  const loadSession = useCallback(() => {
    api('session', { redirectOn401: !isPublic }).then(
      (current) => {
        setCsrfToken(current.csrf_token);
        setSession(current);
        setChecked(true);
      },
      () => setChecked(true),
    );
  }, [isPublic]);
  useEffect(() => {
    if (!isPublic) loadSession();
    else setChecked(true);
  }, []);

  useEffect(() => {
    const title =
      NAVIGATION.find(([href]) => path.startsWith(href))?.[1] ?? (path.startsWith('/dashboard/sign-in') ? 'Sign in' : 'Dashboard');
    document.title = `${title} · Switchyard`;
  }, [path]);

  const signedIn = (current, next) => {
    setCsrfToken(current.csrf_token);
    setSession(current);
    navigate(next);
  };
  const signOut = async () => {
    await api('sign-out', { method: 'POST' }).catch(() => undefined);
    setSession(undefined);
    navigate('/dashboard/sign-in');
  };

  if (path.startsWith('/dashboard/sign-in')) return html`<${SignIn} onSignedIn=${signedIn} />`;
  if (path.startsWith('/dashboard/set-password')) return html`<${SetPassword} onSignedIn=${signedIn} />`;
  if (!session) return html`<main><p>${checked ? 'Redirecting to sign-in…' : 'Loading…'}</p></main>`;

  let page;
  const batchMatch = /^\/dashboard\/batches\/([^/]+)$/.exec(path);
  if (batchMatch) page = html`<${BatchPage} id=${decodeURIComponent(batchMatch[1])} />`;
  else if (path.startsWith('/dashboard/usage')) page = html`<${UsagePage} />`;
  else if (path.startsWith('/dashboard/batches')) page = html`<${BatchesPage} session=${session} />`;
  else if (path.startsWith('/dashboard/files')) page = html`<${FilesPage} session=${session} />`;
  else if (path.startsWith('/dashboard/models')) page = html`<${ModelsPage} />`;
  else if (path.startsWith('/dashboard/audit')) page = html`<${AuditPage} />`;
  else if (path.startsWith('/dashboard/account'))
    page = html`<${AccountPage} session=${session} onSignedOut=${() => navigate('/dashboard/sign-in')} onChanged=${loadSession} />`;
  else page = html`<${KeysPage} session=${session} />`;

  return html`<div class="layout">
    <a class="skip" href="#content">Skip to content</a>
    <header>
      <strong class="brand">Switchyard</strong>
      <nav aria-label="Dashboard">
        <ul>
          ${NAVIGATION.map(
            ([href, label]) =>
              html`<li>
                <${Link}
                  href=${href}
                  aria-current=${path.startsWith(href) || (href === '/dashboard/keys' && path === '/dashboard') ? 'page' : undefined}
                  >${label}<//
                >
              </li>`,
          )}
        </ul>
      </nav>
      <span class="who">${session.email} · ${session.organization}</span>
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    <div id="content" tabindex="-1">${page}</div>
  </div>`;
}

render(html`<${App} />`, document.getElementById('app'));
