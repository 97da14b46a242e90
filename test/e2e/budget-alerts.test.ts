// Budget alerts end to end (issue 37 item 4) on a real server: the budgets' settlement hands the
// runtime's spend observer what each request did to its budgets (fed here directly, as the metering
// service does), and the alerts leave by email to a real SMTP server (smtp-server) and by signed
// webhooks to a real HTTP receiver, where the official `standardwebhooks` verifier checks every
// signature. Crossing 50/80/100% sends exactly one email and one webhook each per period; crossing
// several at once sends each; the projected rule fires once; a down endpoint is retried with the
// backoff this test shortens, then marked failed, and the dashboard's delivery log says so; two
// instances on one Postgres observing the same crossings deliver each alert once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createPostgresTestDatabase, type TestDatabase } from '../support/databases.ts';
import { DashboardClient } from '../support/dashboard-client.ts';
import { startMailServer, type MailServer } from '../support/mail-server.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { DOLLAR, FAST_ALERTS, monthStart, settled, spend } from '../support/alert-observations.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.ts';

const PASSWORD = 'correct horse battery';

/** The verified payloads a receiver got at `path` (every signature checked with the endpoint's secret). */
function verified(receiver: WebhookReceiver, path: string, secret: string): any[] {
  return receiver
    .at(path)
    .map((request: ReceivedWebhook) => new Webhook(secret).verify(request.body, request.headers as Record<string, string>));
}

async function ownerClient(server: TestServer, organization: string, email: string): Promise<DashboardClient> {
  await server.runtime.accounts.createOwner({ organization, email, password: PASSWORD });
  const client = new DashboardClient(server.origin);
  assert.equal((await client.signIn(email, PASSWORD)).status, 200);
  return client;
}

async function addEndpoint(client: DashboardClient, url: string, events?: string[]): Promise<{ id: string; secret: string }> {
  const created = await client.request('POST', 'webhooks', { url, ...(events === undefined ? {} : { events }) });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.match(created.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  return { id: created.body.id, secret: created.body.secret };
}

describe('budget alerts through a real server', () => {
  let mail: MailServer;
  let receiver: WebhookReceiver;
  let server: TestServer;
  let owner: DashboardClient;
  let endpoint: { id: string; secret: string };

  before(async () => {
    mail = await startMailServer();
    receiver = await startWebhookReceiver('ok');
    server = await startTestServer({ config: { smtp: { url: mail.url, from: 'Alerts <alerts@switchyard.test>' }, alerts: FAST_ALERTS } });
    owner = await ownerClient(server, 'org-acme', 'pat@acme.test');
    endpoint = await addEndpoint(owner, `${receiver.origin}/acme`);
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
    await mail?.close();
  });

  test('crossing 50, 80 and 100% sends exactly one email and one signed webhook each per period', async () => {
    const observer = server.runtime.alerts.spendObserver;
    for (const spent of [0.3, 0.55, 0.6, 0.85, 0.85, 0.9, 1.0, 1.0].map((share) => share * DOLLAR))
      observer.observe(spend('bud_month', spent));
    await settled(server);
    const events = verified(receiver, '/acme', endpoint.secret);
    assert.deepEqual(
      events.map((event) => [event.type, event.data.threshold_percent, event.data.spent_micro_usd]),
      [
        ['budget.threshold_reached', 50, 550_000],
        ['budget.threshold_reached', 80, 850_000],
        ['budget.threshold_reached', 100, 1_000_000],
      ],
    );
    assert.equal(new Set(receiver.at('/acme').map((request) => request.headers['webhook-id'])).size, 3, 'one webhook-id per message');
    const first = events[0];
    assert.equal(first.version, 1);
    assert.match(first.id, /^evt_/);
    assert.deepEqual(first.data.budget, {
      id: 'bud_month',
      scope: 'organization',
      key_id: null,
      key_name: null,
      period: 'month',
      amount_micro_usd: DOLLAR,
      period_start: new Date(monthStart(0)).toISOString(),
      resets_at: new Date(monthStart(1)).toISOString(),
    });
    assert.equal(mail.mails.length, 3);
    assert.deepEqual(
      mail.mails.map((message) => message.to),
      [['pat@acme.test'], ['pat@acme.test'], ['pat@acme.test']],
    );
    // Long headers are folded onto a second line (RFC 5322): unfold before reading the subject.
    assert.match(
      mail.mails[1]!.text.replace(/\r\n[ \t]/g, ' '),
      /Subject: Budget alert: 80% of the monthly budget of organization org-acme reached/,
    );
    assert.match(mail.mails[1]!.text, /Spent: +\$0\.85 of \$1\.00 \(85\.0%\)/);
    assert.match(
      mail.mails[1]!.text,
      new RegExp(`Resets at: +${new Date(monthStart(1)).toISOString().slice(0, 16).replace('T', ' ')} UTC`),
    );

    // The next period starts afresh: 50% there is one more of each.
    observer.observe(spend('bud_month', 0.5 * DOLLAR, { month: 1, atMs: monthStart(2) - 60_000 }));
    await settled(server);
    assert.equal(receiver.at('/acme').length, 4);
    assert.equal(mail.mails.length, 4);
  });

  test('several thresholds crossed by one settlement each fire once; a key budget names its key', async () => {
    const key = (await server.runtime.keys.create({ organization: 'org-acme', tier: 'Developer', name: 'ci runner' })).record;
    const before = receiver.at('/acme').length;
    const mailsBefore = mail.mails.length;
    server.runtime.alerts.spendObserver.observe(spend('bud_key', 1.2 * DOLLAR, { scope: 'key', keyId: key.id }));
    await settled(server);
    const events = verified(receiver, '/acme', endpoint.secret).slice(before);
    assert.deepEqual(
      events.map((event) => event.data.threshold_percent),
      [50, 80, 100],
    );
    assert.deepEqual([events[0].data.budget.key_id, events[0].data.budget.key_name], [key.id, 'ci runner']);
    assert.equal(mail.mails.length - mailsBefore, 3);
    assert.match(
      mail.mails.at(-1)!.text,
      /The monthly budget of key "ci runner" in organization org-acme has reached 100% of its amount\./,
    );
  });

  test('the projected rule fires once per period when the rate runs over the amount', async () => {
    const start = monthStart(0);
    const length = monthStart(1) - start;
    const observer = server.runtime.alerts.spendObserver;
    const before = receiver.at('/acme').length;
    // 5% of the period: too early to project. 20%: 30% spent projects 150%.
    observer.observe(spend('bud_rate', 0.1 * DOLLAR, { atMs: start + length * 0.05 }));
    observer.observe(spend('bud_rate', 0.3 * DOLLAR, { atMs: start + length * 0.2 }));
    observer.observe(spend('bud_rate', 0.35 * DOLLAR, { atMs: start + length * 0.21 }));
    await settled(server);
    const events = verified(receiver, '/acme', endpoint.secret).slice(before);
    assert.deepEqual(
      events.map((event) => event.type),
      ['budget.projected_to_exceed'],
    );
    assert.equal(events[0].data.projected_micro_usd, 1_500_000);
  });

  test('a down endpoint is retried with backoff, then marked failed; the delivery log shows it', async () => {
    const down = await startWebhookReceiver('down');
    try {
      const other = await ownerClient(server, 'org-down', 'sam@down.test');
      const failing = await addEndpoint(other, `${down.origin}/down`, ['budget.threshold_reached']);
      server.runtime.alerts.spendObserver.observe(spend('bud_down', 0.5 * DOLLAR, { organization: 'org-down' }));
      await settled(server);
      const attempts = down.at('/down');
      assert.ok(attempts.length >= 3, `retried: ${attempts.length} attempts`);
      assert.equal(new Set(attempts.map((request) => request.headers['webhook-id'])).size, 1, 'the same webhook-id on every retry');
      // Each attempt is signed afresh, and every one verifies.
      for (const request of attempts) new Webhook(failing.secret).verify(request.body, request.headers as Record<string, string>);
      const log = await other.request('GET', 'alert-deliveries?status=failed');
      assert.equal(log.status, 200);
      const webhook = log.body.data.find((delivery: any) => delivery.kind === 'webhook');
      assert.equal(webhook.status, 'failed');
      assert.equal(webhook.attempts, attempts.length);
      assert.equal(webhook.last_status_code, 503);
      assert.equal(webhook.last_error, 'the endpoint answered HTTP 503');
      assert.equal(webhook.next_attempt_at, null);
      assert.equal(webhook.summary, '50% of budget bud_down reached');
      // The organization's own email went out; another organization's log shows none of this.
      assert.ok(log.body.data.every((delivery: any) => delivery.organization === 'org-down'));
      const acmeLog = await owner.request('GET', 'alert-deliveries?limit=100');
      assert.ok(acmeLog.body.data.every((delivery: any) => delivery.organization === 'org-acme'));
    } finally {
      await down.close();
    }
  });

  test('the test button sends a signed webhook.test sample, listed as delivered', async () => {
    const sent = await owner.request('POST', `webhooks/${endpoint.id}/test`);
    assert.equal(sent.status, 202);
    assert.equal(sent.body.status, 'pending');
    await settled(server);
    const sample = verified(receiver, '/acme', endpoint.secret).find((event) => event.type === 'webhook.test');
    assert.equal(sample.data.endpoint_id, endpoint.id);
    const log = await owner.request('GET', 'alert-deliveries?limit=1');
    assert.deepEqual([log.body.data[0].id, log.body.data[0].status, log.body.data[0].attempts], [sent.body.id, 'delivered', 1]);
  });
});

describe('alerts without SMTP', () => {
  test('the delivery log says mail is not configured, and webhooks still go', async () => {
    const receiver = await startWebhookReceiver('ok');
    const server = await startTestServer({ config: { alerts: FAST_ALERTS } });
    try {
      const owner = await ownerClient(server, 'org-nomail', 'kim@nomail.test');
      await addEndpoint(owner, `${receiver.origin}/nomail`);
      server.runtime.alerts.spendObserver.observe(spend('bud_nomail', 0.5 * DOLLAR, { organization: 'org-nomail' }));
      await settled(server);
      assert.equal(receiver.at('/nomail').length, 1);
      const log = (await owner.request('GET', 'alert-deliveries')).body.data;
      const email = log.find((delivery: any) => delivery.kind === 'email');
      assert.deepEqual(
        [email.status, email.target, email.last_error],
        ['failed', 'kim@nomail.test', 'mail is not configured: set SMTP_URL (the mail server invitations use)'],
      );
      assert.equal((await owner.request('GET', 'webhooks')).body.mail_configured, false);
    } finally {
      await server.close();
      await receiver.close();
    }
  });
});

const postgresUrl = process.env['TEST_DATABASE_URL'];
if (!postgresUrl) console.warn('\n*** SKIPPED: two-instance alerts suite (set TEST_DATABASE_URL=postgres://127.0.0.1:5432/test) ***\n');

describe('two instances on one Postgres', { skip: !postgresUrl }, () => {
  let database: TestDatabase;
  let mail: MailServer;
  let receiver: WebhookReceiver;
  const servers: TestServer[] = [];

  before(async () => {
    database = (await createPostgresTestDatabase())!;
    mail = await startMailServer();
    receiver = await startWebhookReceiver('ok');
    for (const instanceId of ['alerts-one', 'alerts-two']) {
      servers.push(
        await startTestServer({
          config: { databaseUrl: database.url, instanceId, smtp: { url: mail.url }, alerts: FAST_ALERTS },
        }),
      );
    }
  });
  after(async () => {
    for (const server of servers) await server.close();
    await receiver?.close();
    await mail?.close();
    await database?.drop();
  });

  test('both observe the same crossings at once: each alert is delivered once, by email and webhook', async () => {
    const [one, two] = servers as [TestServer, TestServer];
    const owner = await ownerClient(one, 'org-shared', 'lee@shared.test');
    const { secret } = await addEndpoint(owner, `${receiver.origin}/shared`);
    const budgets = Array.from({ length: 20 }, (_value, index) => `bud_shared_${index}`);
    for (const share of [0.5, 0.8, 1.0]) {
      for (const budget of budgets) {
        const observation = spend(budget, share * DOLLAR, { organization: 'org-shared' });
        one.runtime.alerts.spendObserver.observe(observation);
        two.runtime.alerts.spendObserver.observe(observation);
      }
    }
    await settled(one);
    await settled(two);
    const events = verified(receiver, '/shared', secret);
    assert.equal(events.length, budgets.length * 3);
    const keys = events.map((event) => `${event.data.budget.id} ${event.data.threshold_percent}`);
    assert.equal(new Set(keys).size, keys.length, 'no alert twice');
    assert.equal(new Set(receiver.at('/shared').map((request) => request.headers['webhook-id'])).size, events.length);
    assert.equal(mail.mails.length, budgets.length * 3);
  });
});
