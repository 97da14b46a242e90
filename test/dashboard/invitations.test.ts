// Invitations and the password change as the second attack (issue 40: F2, F3, F7, F11) used them, on
// a real server (SQLite) whose mail goes to a real SMTP server (smtp-server): invitations are limited
// per organization per hour and per day and audited, the inviter's text reaches the mail escaped, an
// address another organization (or an operator) holds is not revealed and cannot be squatted past its
// link, an address is read the same way by the check and the mailer, a failed mail names no SMTP host
// and leaves an invitation that can be sent again, and a password change counts like sign-in.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { pino } from 'pino';
import { loadConfig, type ConfigInput } from '../../src/config/index.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { freePort } from '../support/free-port.ts';
import { startMailServer, type MailServer } from '../support/mail-server.ts';

const PASSWORD = 'correct horse battery';
const HOUR = 3_600_000;

interface Instance {
  runtime: Runtime;
  origin: string;
  dataDir: string;
  close(): Promise<void>;
}

async function start(overrides: ConfigInput, now?: () => number): Promise<Instance> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-invitations-'));
  const config = loadConfig({
    env: {},
    overrides: { dataDir, logLevel: 'silent', bootstrapKey: false, ...overrides, server: { port: 0, host: '127.0.0.1' } },
  });
  const runtime = await startRuntime(config, {
    logger: pino({ level: 'silent' }),
    batchWorker: false,
    ...(now === undefined ? {} : { dashboardAccounts: { now } }),
  });
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`;
  return {
    runtime,
    origin,
    dataDir,
    close: async () => {
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function ownerOf(instance: Instance, organization: string, email: string): Promise<DashboardClient> {
  await createOwner(instance.runtime, organization, email, PASSWORD);
  const client = new DashboardClient(instance.origin);
  assert.equal((await client.signIn(email, PASSWORD)).status, 200);
  return client;
}

describe('invitations with SMTP', () => {
  let mail: MailServer;
  let instance: Instance;
  let alpha: DashboardClient;
  let beta: DashboardClient;

  before(async () => {
    mail = await startMailServer();
    instance = await start({ smtp: { url: mail.url, from: 'Switchyard <sy@test.example>' }, invitations: { perHour: 4, perDay: 100 } });
    alpha = await ownerOf(instance, 'org-alpha', 'owner@alpha.example');
    beta = await ownerOf(instance, 'org-beta', 'owner@beta.example');
  });
  after(async () => {
    await instance.close();
    await mail.close();
  });

  test('an organization sends at most its invitations per hour (429 after), audited; another organization is not held', async () => {
    const before = mail.mails.length;
    const statuses: number[] = [];
    let refusal: any;
    for (let index = 0; index < 6; index++) {
      const sent = await alpha.request('POST', 'people/invite', { email: `target${index}@victim-domain.example`, role: 'member' });
      statuses.push(sent.status);
      if (sent.status === 429) refusal = sent;
    }
    assert.deepEqual(statuses, [201, 201, 201, 201, 429, 429]);
    assert.equal(refusal.body.error.code, 'too_many_invitations');
    assert.match(refusal.body.error.message, /4 invitations an hour/);
    assert.ok(Number(refusal.headers.get('retry-after')) > 0);
    assert.equal(mail.mails.length - before, 4, 'the SMTP server saw 4 mails, not 6');
    const audit = await alpha.request('GET', 'audit');
    assert.equal(audit.body.data.filter((entry: { action: string }) => entry.action === 'person.invited').length, 4);
    assert.equal((await beta.request('POST', 'people/invite', { email: 'someone@beta.example', role: 'member' })).status, 201);
  });

  test('an address is one plain address: display names and lists are refused, nothing is mailed', async () => {
    const before = mail.mails.length;
    for (const email of [
      'victim<att@evil.example>',
      'att@evil.example,victim',
      'a@b.example%0d%0aBcc:x',
      '"x"@evil.example',
      'victim <att@evil.example>',
    ]) {
      const refused = await beta.request('POST', 'people/invite', { email, role: 'member' });
      assert.equal(refused.status, 400, email);
      assert.equal(refused.body.error.param, 'email');
    }
    assert.equal(mail.mails.length, before);
    const people = await beta.request('GET', 'people');
    assert.ok(people.body.data.every((person: { email: string }) => !/[<>,%"]/.test(person.email)));
  });

  test('the inviter text reaches the mail escaped', async () => {
    // An account stored before addresses were read strictly, with a message in its "address".
    const database = new SqliteDatabase(join(instance.dataDir, 'switchyard.db'));
    database
      .prepare('update owners set email = ? where email = ?')
      .run('claim-your-prize-at-evil.example<att@evil.example>', 'owner@beta.example');
    database.close();
    const sent = await beta.request('POST', 'people/invite', { email: 'escaped@beta.example', role: 'member' });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const message = mail.mails.at(-1)!;
    assert.deepEqual(message.to, ['escaped@beta.example']);
    assert.ok(!message.text.includes('<att@evil.example>'), message.text);
    assert.match(message.text, /claim-your-prize-at-evil\.example\?att@evil\.example\? invited you/);
  });

  test('an address with an account elsewhere (an owner, an operator) answers like any other invitation', async () => {
    await instance.runtime.people.createOperator('op@ops.example', instance.origin);
    const gamma = await ownerOf(instance, 'org-gamma', 'owner@gamma.example');
    const fresh = await gamma.request('POST', 'people/invite', { email: 'Nobody@Fresh.example', role: 'member' });
    assert.equal(fresh.status, 201);
    for (const email of ['owner@alpha.example', ' OP@ops.example ']) {
      const before = mail.mails.length;
      const answer = await gamma.request('POST', 'people/invite', { email, role: 'member' });
      assert.equal(answer.status, 201, `${email}: ${JSON.stringify(answer.body)}`);
      assert.deepEqual(Object.keys(answer.body).sort(), Object.keys(fresh.body).sort());
      assert.equal(answer.body.delivery, fresh.body.delivery);
      assert.equal(answer.body.link, null);
      assert.equal(answer.body.role, 'member');
      assert.match(answer.body.id, /^own_[A-Za-z0-9]{16}$/);
      // The person is told by mail, without a link to anything.
      assert.equal(mail.mails.length, before + 1);
      assert.ok(!mail.mails.at(-1)!.text.includes('set-password'));
      // And the existing account is untouched.
      const existing = await instance.runtime.accounts.findOwnerByEmail(email);
      assert.notEqual(existing!.organizationId, 'org-gamma');
    }
  });

  test('a failed mail names no SMTP host and leaves an invitation that can be sent again', async () => {
    const port = await freePort();
    const broken = await start({ smtp: { url: `smtp://127.0.0.1:${port}`, from: 'sy@test.example' } });
    try {
      const owner = await ownerOf(broken, 'org-delta', 'owner@delta.example');
      const failed = await owner.request('POST', 'people/invite', { email: 'late@delta.example', role: 'member' });
      assert.equal(failed.status, 502);
      assert.equal(failed.body.error.code, 'service_unavailable');
      assert.ok(
        !failed.body.error.message.includes('127.0.0.1') && !failed.body.error.message.includes(String(port)),
        failed.body.error.message,
      );
      assert.match(failed.body.error.message, /send it again/);
      // Sending it again is a new attempt for the same pending person, not "already exists".
      const again = await owner.request('POST', 'people/invite', { email: 'late@delta.example', role: 'owner' });
      assert.equal(again.status, 502);
      const people = await owner.request('GET', 'people');
      const pending = people.body.data.filter((person: { email: string }) => person.email === 'late@delta.example');
      assert.equal(pending.length, 1);
      assert.equal(pending[0].role, 'owner');
    } finally {
      await broken.close();
    }
  });
});

describe('invitations without SMTP', () => {
  let clock = Date.now();
  let instance: Instance;

  before(async () => {
    instance = await start({ invitations: { perHour: 50, perDay: 3 } }, () => clock);
  });
  after(() => instance.close());

  test('the daily limit holds when every hour is under its own', async () => {
    const owner = await ownerOf(instance, 'org-daily', 'owner@daily.example');
    const statuses: number[] = [];
    for (let index = 0; index < 4; index++) {
      statuses.push((await owner.request('POST', 'people/invite', { email: `d${index}@daily.example`, role: 'member' })).status);
      clock += HOUR + 60_000; // past the hourly window, within the day
    }
    assert.deepEqual(statuses, [201, 201, 201, 429]);
  });

  test('re-inviting a pending person sends a new link and voids the old one', async () => {
    const owner = await ownerOf(instance, 'org-resend', 'owner@resend.example');
    const first = await owner.request('POST', 'people/invite', { email: 'pending@resend.example', role: 'member' });
    const second = await owner.request('POST', 'people/invite', { email: 'pending@resend.example', role: 'member' });
    assert.equal(second.status, 201);
    assert.equal(second.body.id, first.body.id);
    const token = (link: string): string => /#token=([A-Za-z0-9]+)$/.exec(link)![1]!;
    const client = new DashboardClient(instance.origin);
    assert.equal((await client.request('POST', 'set-password', { token: token(first.body.link), password: PASSWORD })).status, 401);
    assert.equal((await client.request('POST', 'set-password', { token: token(second.body.link), password: PASSWORD })).status, 200);
  });

  test('an unaccepted invitation does not squat the address once its link expired', async () => {
    const squatter = await ownerOf(instance, 'org-squat', 'owner@squat.example');
    let victim = await ownerOf(instance, 'org-victim', 'owner@victim.example');
    assert.equal((await squatter.request('POST', 'people/invite', { email: 'cto@victim.example', role: 'owner' })).status, 201);
    // While the squatter's link lives, the victim's invitation answers like any other (nothing revealed).
    const early = await victim.request('POST', 'people/invite', { email: 'cto@victim.example', role: 'owner' });
    assert.equal(early.status, 201);
    assert.equal(early.body.delivery, 'logged');
    // A day on, the unaccepted invitation holds the address for nobody.
    clock += 25 * HOUR;
    victim = new DashboardClient(instance.origin);
    assert.equal((await victim.signIn('owner@victim.example', PASSWORD)).status, 200);
    const invited = await victim.request('POST', 'people/invite', { email: 'cto@victim.example', role: 'owner' });
    assert.equal(invited.status, 201, JSON.stringify(invited.body));
    const token = /#token=([A-Za-z0-9]+)$/.exec(invited.body.link)![1]!;
    const cto = new DashboardClient(instance.origin);
    const set = await cto.request('POST', 'set-password', { token, password: PASSWORD });
    assert.equal(set.status, 200);
    assert.equal(set.body.organization, 'org-victim');
  });

  test('a password change counts like sign-in (429 past the limit) and failures are audited', async () => {
    const owner = await ownerOf(instance, 'org-guess', 'owner@guess.example');
    const statuses: number[] = [];
    for (let index = 0; index < 12; index++)
      statuses.push(
        (await owner.request('POST', 'password', { current_password: `wrong-guess-${index}`, new_password: 'whatever-123456' })).status,
      );
    assert.deepEqual(statuses, [400, 400, 400, 400, 400, 429, 429, 429, 429, 429, 429, 429]);
    const right = await owner.request('POST', 'password', { current_password: PASSWORD, new_password: 'whatever-123456' });
    assert.equal(right.status, 429, 'the right password is not tried once the limit is reached');
    const audit = await owner.request('GET', 'audit');
    const failed = audit.body.data.find((entry: { action: string }) => entry.action === 'reauthentication.failed');
    assert.ok(failed, JSON.stringify(audit.body.data));
    assert.equal(failed.count, 5);
  });
});
