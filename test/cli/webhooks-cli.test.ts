// `switchyard webhooks` run as separate processes against the database of a running server (as an
// operator would): an operator endpoint added from the command line (secret printed once) receives
// every organization's alerts, signed with that secret; `test` queues a sample that the running
// server's dispatcher sends; `deliveries` lists the log; refusals are one clear line; `remove` ends it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { DOLLAR, FAST_ALERTS, settled, spend } from '../support/alert-observations.ts';
import { runCli } from '../support/run-cli.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';
import { until } from '../support/until.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

describe('webhooks CLI', () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let env: NodeJS.ProcessEnv;
  let endpoint = '';
  let secret = '';

  before(async () => {
    receiver = await startWebhookReceiver('ok');
    server = await startTestServer({ config: { alerts: FAST_ALERTS } });
    env = { DATA_DIR: server.dataDir, LOG_LEVEL: 'silent', ALERT_WEBHOOKS_ALLOW_HTTP: 'on', ALERT_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES: 'on' };
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
  });

  test('add prints the secret once; list shows the endpoint; bad input is one clear line', async () => {
    const added = await runCli(
      ['webhooks', 'add', '--url', `${receiver.origin}/ops`, '--events', 'budget.threshold_reached', '--description', 'ops pager'],
      env,
    );
    assert.equal(added.code, 0, added.stderr);
    endpoint = /Added (whep_[A-Za-z0-9]+)/.exec(added.stdout)![1]!;
    secret = /^(whsec_\S+)$/m.exec(added.stdout)![1]!;
    const listed = await runCli(['webhooks', 'list', '--json'], env);
    const rows = JSON.parse(listed.stdout) as Array<{ id: string; events: string[]; organizationId: string | null; secret?: string }>;
    assert.deepEqual(
      rows.map((row) => [row.id, row.events, row.organizationId, row.secret]),
      [[endpoint, ['budget.threshold_reached'], null, undefined]],
    );
    const refused = await runCli(['webhooks', 'add', '--url', 'https://10.0.0.1/hook'], { DATA_DIR: server.dataDir, LOG_LEVEL: 'silent' });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^url points to a private, loopback or other non-public address/);
    const unknownEvent = await runCli(['webhooks', 'add', '--url', `${receiver.origin}/x`, '--events', 'budget.gone'], env);
    assert.match(unknownEvent.stderr, /Unknown event type "budget\.gone"/);
  });

  test("the operator endpoint receives every organization's alerts; test queues a sample the server sends", async () => {
    server.runtime.alerts.spendObserver.observe(spend('bud_cli', 0.5 * DOLLAR, { organization: 'org-cli' }));
    await settled(server);
    const tested = await runCli(['webhooks', 'test', endpoint], env);
    assert.equal(tested.code, 0, tested.stderr);
    await until(async () => (receiver.at('/ops').length === 2 ? true : undefined), 'the alert and the test sample');
    const events = receiver
      .at('/ops')
      .map((request) => new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as any);
    assert.deepEqual(
      events.map((event) => [event.type, event.data.organization]),
      [
        ['budget.threshold_reached', 'org-cli'],
        ['webhook.test', null],
      ],
    );
    await settled(server);
    const log = await runCli(['webhooks', 'deliveries', '--status', 'delivered'], env);
    assert.match(log.stdout, /\| org-cli \| budget\.threshold_reached \| webhook:http:\/\/127\.0\.0\.1:\d+\/ops \| delivered \| 1 \|/);
    assert.match(log.stdout, /\| \(operators\) \| webhook\.test \| .* \| delivered \| 1 \|/);
  });

  test('remove ends it', async () => {
    const removed = await runCli(['webhooks', 'remove', endpoint], env);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match((await runCli(['webhooks', 'list'], env)).stdout, /No operator webhook endpoints\./);
  });
});
