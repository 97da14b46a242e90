// The dashboard's webhook endpoints API on a real server with the default (production) settings:
// HTTPS to public hosts only. Bad inputs are refused with the SPEC envelope naming the field (a
// non-HTTPS URL, private and loopback addresses, `localhost`, a huge URL, credentials in the URL, an
// unknown event type, a long description) and leave nothing stored; the endpoint cap holds; owners
// reach only their organization's endpoints, members none, and operators have their own, which
// receive every organization's alerts; every change needs the CSRF header and is audited.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';
// 93.184.215.14 is a public address: accepted without a DNS lookup, and never connected to (this
// server runs no delivery dispatcher: queued test samples stay in the outbox).
const PUBLIC_URL = 'https://93.184.215.14/hooks/switchyard';

function refusedWith(response: { status: number; body: any }, code: string, param: string | null): void {
  assert.equal(response.status, 400, JSON.stringify(response.body));
  assert.equal(response.body.error.type, 'invalid_request_error');
  assert.equal(response.body.error.code, code);
  assert.equal(response.body.error.param, param, response.body.error.message);
}

describe('webhook endpoints API (default settings)', () => {
  let server: TestServer;
  let owner: DashboardClient;
  let member: DashboardClient;
  let operator: DashboardClient;

  before(async () => {
    server = await startTestServer({ config: { alerts: { webhooks: { maxEndpointsPerOrganization: 2 } } }, alertDispatcher: false });
    await createOwner(server.runtime, 'org-hooks', 'olga@hooks.test', PASSWORD);
    await createOwner(server.runtime, 'org-hooks', 'mia@hooks.test', PASSWORD, { role: 'member' });
    owner = new DashboardClient(server.origin);
    assert.equal((await owner.signIn('olga@hooks.test', PASSWORD)).status, 200);
    member = new DashboardClient(server.origin);
    assert.equal((await member.signIn('mia@hooks.test', PASSWORD)).status, 200);
    const issued = await server.runtime.people.createOperator('ops@hooks.test', server.origin);
    operator = new DashboardClient(server.origin);
    const token = /#token=([A-Za-z0-9]+)$/.exec(issued.link)![1]!;
    assert.equal((await operator.request('POST', 'set-password', { token, password: PASSWORD }, { csrf: false })).status, 200);
    assert.equal((await operator.signIn('ops@hooks.test', PASSWORD)).status, 200);
  });
  after(async () => {
    await server?.close();
  });

  test('bad URLs and events are refused naming the field, and nothing is stored', async () => {
    const cases: [unknown, string, string | null][] = [
      [{ url: 'http://hooks.example.com/alerts' }, 'invalid_parameter', 'url'],
      [{ url: 'ftp://hooks.example.com/alerts' }, 'invalid_parameter', 'url'],
      [{ url: 'https://10.1.2.3/alerts' }, 'invalid_parameter', 'url'],
      [{ url: 'https://192.168.0.10:8443/alerts' }, 'invalid_parameter', 'url'],
      [{ url: 'https://169.254.169.254/latest/meta-data' }, 'invalid_parameter', 'url'],
      [{ url: 'https://[::1]/alerts' }, 'invalid_parameter', 'url'],
      [{ url: 'https://[::ffff:127.0.0.1]/alerts' }, 'invalid_parameter', 'url'],
      [{ url: 'https://localhost/alerts' }, 'invalid_parameter', 'url'],
      [{ url: 'https://metadata.localhost./alerts' }, 'invalid_parameter', 'url'],
      [{ url: `https://hooks.example.com/${'a'.repeat(3_000)}` }, 'invalid_parameter', 'url'],
      [{ url: 'https://user:secret@hooks.example.com/alerts' }, 'invalid_parameter', 'url'],
      [{ url: 'https://hooks.example.com/alerts#top' }, 'invalid_parameter', 'url'],
      [{ url: 'not a url' }, 'invalid_parameter', 'url'],
      [{ url: 42 }, 'invalid_parameter', 'url'],
      [{}, 'missing_parameter', 'url'],
      [{ url: PUBLIC_URL, events: ['budget.threshold_reached', 'budget.exploded'] }, 'invalid_parameter', 'events[1]'],
      [{ url: PUBLIC_URL, events: [] }, 'invalid_parameter', 'events'],
      [{ url: PUBLIC_URL, events: 'budget.threshold_reached' }, 'invalid_parameter', 'events'],
      [{ url: PUBLIC_URL, description: 'x'.repeat(201) }, 'invalid_parameter', 'description'],
    ];
    for (const [body, code, param] of cases) refusedWith(await owner.request('POST', 'webhooks', body), code, param);
    const listed = await owner.request('GET', 'webhooks');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.data, []);
    assert.equal(listed.body.allow_http, false);
    assert.deepEqual(listed.body.event_types, ['budget.threshold_reached', 'budget.projected_to_exceed', 'webhook.test']);
  });

  test('a public HTTPS endpoint is accepted, its secret answered once; at most the configured number', async () => {
    const created = await owner.request('POST', 'webhooks', {
      url: PUBLIC_URL,
      description: 'pager',
      events: ['budget.threshold_reached'],
    });
    assert.equal(created.status, 201);
    assert.match(created.body.secret, /^whsec_/);
    assert.deepEqual(
      [created.body.url, created.body.events, created.body.organization, created.body.created_by],
      [PUBLIC_URL, ['budget.threshold_reached'], 'org-hooks', 'olga@hooks.test'],
    );
    const listed = await owner.request('GET', 'webhooks');
    assert.equal(listed.body.data.length, 1);
    assert.equal(listed.body.data[0].secret, undefined, 'the secret is shown once, at creation');
    assert.equal((await owner.request('POST', 'webhooks', { url: `${PUBLIC_URL}/2` })).status, 201);
    refusedWith(await owner.request('POST', 'webhooks', { url: `${PUBLIC_URL}/3` }), 'invalid_parameter', null);
    const audit = await owner.request('GET', 'audit');
    assert.ok(audit.body.data.some((entry: any) => entry.action === 'webhook.created' && entry.target === created.body.id));
    // Deleting frees a place.
    const deleted = await owner.request('DELETE', `webhooks/${created.body.id}`);
    assert.deepEqual(deleted.body, { id: created.body.id, object: 'webhook_endpoint', deleted: true });
    assert.equal((await owner.request('DELETE', `webhooks/${created.body.id}`)).status, 404);
  });

  test('members, missing CSRF, other organizations and the operator area are refused', async () => {
    assert.equal((await member.request('GET', 'webhooks')).status, 403);
    assert.equal((await member.request('POST', 'webhooks', { url: PUBLIC_URL })).status, 403);
    assert.equal((await member.request('GET', 'alert-deliveries')).status, 403);
    const noCsrf = await owner.request('POST', 'webhooks', { url: PUBLIC_URL }, { csrf: false });
    assert.equal(noCsrf.status, 401);
    assert.equal(noCsrf.body.error.code, 'invalid_token');
    assert.equal((await owner.request('GET', 'operator/webhooks')).status, 403);
    assert.equal((await operator.request('GET', 'webhooks')).status, 403);
    // An operator's endpoint is not an organization's: an owner cannot test or delete it.
    const operatorEndpoint = await operator.request('POST', 'operator/webhooks', { url: `${PUBLIC_URL}/ops` });
    assert.equal(operatorEndpoint.status, 201);
    assert.equal(operatorEndpoint.body.organization, null);
    assert.equal((await owner.request('POST', `webhooks/${operatorEndpoint.body.id}/test`)).status, 404);
    assert.equal((await owner.request('DELETE', `webhooks/${operatorEndpoint.body.id}`)).status, 404);
    refusedWith(await operator.request('POST', 'operator/webhooks', { url: 'https://127.0.0.1/x' }), 'invalid_parameter', 'url');
    refusedWith(await owner.request('GET', 'alert-deliveries?status=lost'), 'invalid_parameter', 'status');
    refusedWith(await owner.request('GET', 'alert-deliveries?after=msg_nothing'), 'invalid_parameter', 'after');
  });

  test("operators see their endpoints and every organization's deliveries", async () => {
    const endpoints = await operator.request('GET', 'operator/webhooks');
    assert.deepEqual(
      endpoints.body.data.map((endpoint: any) => endpoint.url),
      [`${PUBLIC_URL}/ops`],
    );
    const tested = await operator.request('POST', `operator/webhooks/${endpoints.body.data[0].id}/test`);
    assert.equal(tested.status, 202);
    assert.deepEqual(
      [tested.body.event_type, tested.body.kind, tested.body.organization, tested.body.status, tested.body.attempts],
      ['webhook.test', 'webhook', null, 'pending', 0],
    );
    const log = await operator.request('GET', 'operator/alert-deliveries?limit=10');
    assert.ok(log.body.data.some((delivery: any) => delivery.id === tested.body.id));
    // The test button cannot pile up work: at most 5 samples wait per endpoint (no dispatcher runs here).
    for (let index = 1; index < 5; index++)
      assert.equal((await operator.request('POST', `operator/webhooks/${endpoints.body.data[0].id}/test`)).status, 202);
    const sixth = await operator.request('POST', `operator/webhooks/${endpoints.body.data[0].id}/test`);
    assert.deepEqual([sixth.status, sixth.body.error.type, sixth.body.error.code], [429, 'rate_limit_exceeded', 'too_many_pending_tests']);
    // Owners never see an operator endpoint's deliveries.
    const ownerLog = await owner.request('GET', 'alert-deliveries');
    assert.ok(!ownerLog.body.data.some((delivery: any) => delivery.id === tested.body.id));
    const deleted = await operator.request('DELETE', `operator/webhooks/${endpoints.body.data[0].id}`);
    assert.equal(deleted.status, 200);
    // Its queued samples end with it, as failed, and the log says why.
    const ended = (await operator.request('GET', 'operator/alert-deliveries?limit=10')).body.data.find(
      (delivery: any) => delivery.id === tested.body.id,
    );
    assert.deepEqual([ended.status, ended.last_error, ended.attempts], ['failed', 'the endpoint was deleted', 0]);
  });
});
