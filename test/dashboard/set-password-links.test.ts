// Set-password links as the second attack (issue 40, F1 and F8) used them, on a real server (SQLite):
// an operator minting a link for a TOTP owner needs their own password (or code) and is audited; the
// link is never written to the log; using it sets the password but opens no session until the code
// is given, exactly as at sign-in; one operator cannot mint a link for another; a newer link, a used
// one or a password change voids the older links.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/index.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { DashboardClient } from '../support/dashboard-client.ts';

const PASSWORD = 'correct horse battery';
const OWNER = 'tess@a.example';
const STEP_MS = 30_000;

const tokenOf = (link: string): string => /#token=([A-Za-z0-9]+)$/.exec(link)![1]!;

describe('set-password links respect the second factor and need the operator to re-authenticate', () => {
  let dataDir: string;
  let runtime: Runtime;
  let origin: string;
  let owner: DashboardClient;
  let operator: DashboardClient;
  let totp: TOTP;
  let ownerId: string;
  const logLines: string[] = [];
  let clock = Date.now();
  const freshCode = (): string => totp.generate({ timestamp: (clock += STEP_MS) });

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'switchyard-links-'));
    const config = loadConfig({
      env: {},
      overrides: { dataDir, logLevel: 'debug', bootstrapKey: false, server: { port: 0, host: '127.0.0.1' } },
    });
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    runtime = await startRuntime(config, {
      logger: pino({ level: 'debug' }, sink),
      batchWorker: false,
      dashboardAccounts: { now: () => clock },
    });
    await runtime.app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`;
    ownerId = (await runtime.accounts.createOwner({ organization: 'org-a', email: OWNER, password: PASSWORD })).owner.id;
    owner = new DashboardClient(origin);
    assert.equal((await owner.signIn(OWNER, PASSWORD)).status, 200);
    const enrolment = await owner.request('POST', 'totp/enrol');
    totp = new TOTP({ secret: Secret.fromBase32(enrolment.body.secret), digits: 6, period: 30 });
    const enabled = await owner.request('POST', 'totp/enable', { code: totp.generate({ timestamp: clock }), password: PASSWORD });
    assert.equal(enabled.status, 200, JSON.stringify(enabled.body));
    const issued = await runtime.people.createOperator('ops@ops.example', origin);
    operator = new DashboardClient(origin);
    assert.equal((await operator.request('POST', 'set-password', { token: tokenOf(issued.link), password: PASSWORD })).status, 200);
    assert.equal((await operator.signIn('ops@ops.example', PASSWORD)).status, 200);
  });
  after(async () => {
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('minting a link needs the operator password or code; failures and the link are audited; the link is never logged', async () => {
    const path = `operator/organizations/org-a/people/${ownerId}/reset-link`;
    const bare = await operator.request('POST', path);
    assert.equal(bare.status, 400, 'an operator session alone mints nothing');
    assert.equal(bare.body.error.code, 'missing_parameter');
    assert.equal(bare.body.error.param, 'password');
    const wrong = await operator.request('POST', path, { password: 'not the operator password' });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.param, 'password');
    const minted = await operator.request('POST', path, { password: PASSWORD });
    assert.equal(minted.status, 200, JSON.stringify(minted.body));
    assert.equal(minted.body.delivery, 'logged');
    const token = tokenOf(minted.body.link);
    assert.ok(!logLines.join('').includes(token), 'the link is shown once to the operator, never written to the log');

    const audit = await operator.request('GET', 'operator/audit?limit=100');
    const actions = audit.body.data.map((entry: { action: string }) => entry.action);
    assert.ok(actions.includes('owner.link_issued'));
    const ownAudit = await runtime.accounts.listAudit('_operators');
    assert.ok(
      ownAudit.some((entry) => entry.action === 'reauthentication.failed' && entry.actor === 'ops@ops.example'),
      'the wrong password is audited',
    );

    // F1 as reported: the link sets the password, but no session opens before the code.
    const anonymous = new DashboardClient(origin);
    const set = await anonymous.request('POST', 'set-password', { token, password: 'attacker chosen password' }, { csrf: false });
    assert.equal(set.status, 200);
    assert.equal(set.body.object, 'dashboard.password_set');
    assert.equal(set.body.totp_required, true);
    assert.equal(set.headers.get('set-cookie'), null, 'no session cookie before the second factor');
    assert.equal(set.body.csrf_token, undefined);
    const noCode = await anonymous.signIn(OWNER, 'attacker chosen password');
    assert.equal(noCode.status, 401);
    assert.equal(noCode.body.error.code, 'totp_required');
    const withCode = await anonymous.signIn(OWNER, 'attacker chosen password', { totp: freshCode() });
    assert.equal(withCode.status, 200, 'the person with the code signs in with the new password');
    assert.equal((await anonymous.request('GET', 'keys')).status, 200);
    // The owner's earlier session ended with the reset.
    assert.equal((await owner.request('GET', 'keys')).status, 401);
  });

  test('an operator cannot mint a link for another operator through the console', async () => {
    const other = await runtime.people.createOperator('ops2@ops.example', origin);
    const refused = await operator.request('POST', `operator/organizations/_operators/people/${other.person.id}/reset-link`, {
      password: PASSWORD,
    });
    assert.equal(refused.status, 404);
    const crossed = await operator.request('POST', `operator/organizations/org-a/people/${other.person.id}/reset-link`, {
      password: PASSWORD,
    });
    assert.equal(crossed.status, 404);
  });

  test('older links stop working after a newer one is issued or used, and after a password change', async () => {
    const { owner: person } = await runtime.accounts.createOwner({ organization: 'org-a', email: 'new1@a.example', password: PASSWORD });
    const first = tokenOf((await runtime.people.resetLink(person, origin)).link);
    const second = tokenOf((await runtime.people.resetLink(person, origin)).link);
    const client = new DashboardClient(origin);
    const stale = await client.request('POST', 'set-password', { token: first, password: 'another password 1' }, { csrf: false });
    assert.equal(stale.status, 401, 'a newer link voids the older one');
    assert.equal(stale.body.error.code, 'invalid_token');
    const used = await client.request('POST', 'set-password', { token: second, password: 'another password 2' }, { csrf: false });
    assert.equal(used.status, 200);

    // As reported: a link outstanding when the person changes their password must not take the account.
    const outstanding = tokenOf((await runtime.people.resetLink(person, origin)).link);
    const signedIn = new DashboardClient(origin);
    assert.equal((await signedIn.signIn('new1@a.example', 'another password 2')).status, 200);
    const changed = await signedIn.request('POST', 'password', {
      current_password: 'another password 2',
      new_password: 'the owner password 3',
    });
    assert.equal(changed.status, 200);
    const late = await client.request('POST', 'set-password', { token: outstanding, password: 'attacker password 4' }, { csrf: false });
    assert.equal(late.status, 401);
    assert.equal((await signedIn.request('GET', 'keys')).status, 200, 'the person stays signed in');
  });
});
