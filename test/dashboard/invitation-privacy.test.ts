// Invitations tell an owner nothing about other organizations (issue 40 item 4 bullet 2), on a real
// server (SQLite): with SMTP (a real SMTP server) and without, an invitation to an address that has an
// account elsewhere (another organization's owner, an operator) and one to a fresh address give the
// same answers field by field (apart from ids, times and the address itself) to the invitation, the
// People list, re-sending, a role change, the audit log and revocation; no organization holds an
// address it invited: two organizations invite one, the first accepted wins and the other's invitation
// is voided (gone from its list, its link dead, its id unknown).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig, type ConfigInput } from '../../src/config/index.ts';
import { startRuntime, type Runtime } from '../../src/runtime.ts';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startMailServer, type MailServer } from '../support/mail-server.ts';

const PASSWORD = 'correct horse battery';

interface Instance {
  runtime: Runtime;
  origin: string;
  close(): Promise<void>;
}

async function start(overrides: ConfigInput): Promise<Instance> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchyard-invitation-privacy-'));
  const config = loadConfig({
    env: {},
    overrides: { dataDir, logLevel: 'silent', bootstrapKey: false, ...overrides, server: { port: 0, host: '127.0.0.1' } },
  });
  const runtime = await startRuntime(config, { logger: pino({ level: 'silent' }), batchWorker: false });
  await runtime.app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(runtime.app.server.address() as { port: number }).port}`;
  return {
    runtime,
    origin,
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

/** An answer with its ids, times (request ids and timings too), link tokens and the one address replaced, so two invitations' answers compare field by field. */
function masked(value: unknown, email: string, id: string): unknown {
  if (typeof value === 'string')
    return value
      .replaceAll(email, '<email>')
      .replaceAll(id, '<id>')
      .replace(/#token=[A-Za-z0-9]+$/, '#token=<token>');
  if (Array.isArray(value)) return value.map((item) => masked(item, email, id));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        /(_at|^id|^request_id|^processing_time|^timestamp)$/.test(key) && item !== null ? `<${key}>` : masked(item, email, id),
      ]),
    );
  return value;
}

/** Everything the inviting owner sees of one invitation, step by step, through the API. */
async function ownerView(owner: DashboardClient, email: string): Promise<unknown[]> {
  const seen: unknown[] = [];
  const invited = await owner.request('POST', 'people/invite', { email, role: 'member' });
  const id: string = invited.body.id;
  const record = (label: string, answer: { status: number; body: unknown }) =>
    seen.push([label, answer.status, masked(answer.body, email, id)]);
  const listed = async (label: string) => {
    const people = await owner.request('GET', 'people');
    seen.push([
      label,
      people.status,
      masked(
        people.body.data.filter((person: { email: string }) => person.email === email),
        email,
        id,
      ),
    ]);
  };
  record('invite', invited);
  await listed('listed');
  record('invite again', await owner.request('POST', 'people/invite', { email, role: 'member' }));
  record('resend', await owner.request('POST', `people/${id}/resend`));
  record('role', await owner.request('POST', `people/${id}/role`, { role: 'owner' }));
  await listed('listed as owner');
  record('revoke', await owner.request('DELETE', `people/${id}`));
  await listed('listed after revoke');
  record('resend revoked', await owner.request('POST', `people/${id}/resend`));
  record('revoke again', await owner.request('DELETE', `people/${id}`));
  const audit = await owner.request('GET', 'audit');
  seen.push([
    'audit',
    masked(
      audit.body.data
        .filter((entry: { target: string | null }) => entry.target?.includes(email))
        .map((entry: { action: string; target: string }) => [entry.action, entry.target]),
      email,
      id,
    ),
  ]);
  return seen;
}

for (const smtp of [true, false]) {
  describe(`invitations ${smtp ? 'with' : 'without'} SMTP reveal nothing of other organizations`, () => {
    let mail: MailServer | undefined;
    let instance: Instance;
    let owner: DashboardClient;

    before(async () => {
      mail = smtp ? await startMailServer() : undefined;
      instance = await start({
        ...(mail === undefined ? {} : { smtp: { url: mail.url, from: 'Switchyard <sy@test.example>' } }),
        invitations: { perHour: 100, perDay: 1000 },
      });
      await ownerOf(instance, 'org-alpha', 'owner@alpha.example');
      await instance.runtime.people.createOperator('op@ops.example', instance.origin);
      owner = await ownerOf(instance, 'org-gamma', 'owner@gamma.example');
    });
    after(async () => {
      await instance.close();
      await mail?.close();
    });

    test('an address with an account elsewhere and a fresh one look the same to the owner at every step', async () => {
      const fresh = await ownerView(owner, 'fresh@nowhere.example');
      for (const taken of ['owner@alpha.example', 'op@ops.example']) {
        const view = await ownerView(owner, taken);
        assert.deepEqual(view, fresh, taken);
        assert.equal((await instance.runtime.accounts.findOwnerByEmail(taken))!.organizationId === 'org-gamma', false);
      }
      // What the steps showed (the comparison above would pass on two equally wrong views).
      const [, status, answer] = fresh[0] as [string, number, Record<string, unknown>];
      assert.equal(status, 201);
      assert.deepEqual(
        {
          ...answer,
          link: typeof answer['link'] === 'string' ? (answer['link'] as string).replace(/^http:\/\/[^/]+/, '') : answer['link'],
        },
        {
          object: 'person',
          id: '<id>',
          email: '<email>',
          role: 'member',
          delivery: smtp ? 'sent' : 'logged',
          link: smtp ? null : '/dashboard/set-password#token=<token>',
        },
      );
      const [, , listed] = fresh[1] as [string, number, { role: string; password_set: boolean; invitation: boolean; you: boolean }[]];
      assert.equal(listed.length, 1, 'the pending invitation is in the People list');
      assert.deepEqual([listed[0]!.role, listed[0]!.password_set, listed[0]!.invitation, listed[0]!.you], ['member', false, true, false]);
      assert.equal((fresh[4] as [string, number])[1], 200, 'role change');
      assert.equal((fresh[6] as [string, number])[1], 200, 'revoke');
      assert.deepEqual((fresh[7] as [string, number, unknown[]])[2], [], 'revoked: no longer listed');
      assert.equal((fresh[8] as [string, number])[1], 404, 're-sending a revoked invitation');
      assert.deepEqual((fresh[10] as [string, unknown])[1], [
        ['invitation.revoked', '<email>'],
        ['person.role_changed', '<email>: member -> owner'],
        ['person.invited', '<email> (member)'],
        ['person.invited', '<email> (member)'],
        ['person.invited', '<email> (member)'],
      ]);
    });
  });
}

describe('no organization holds an address it invited', () => {
  let instance: Instance;

  before(async () => {
    instance = await start({ invitations: { perHour: 100, perDay: 1000 } });
  });
  after(() => instance.close());

  test('two organizations invite one address: the first accepted wins, the other invitation is voided', async () => {
    const first = await ownerOf(instance, 'org-first', 'owner@first.example');
    const second = await ownerOf(instance, 'org-second', 'owner@second.example');
    const token = (link: string): string => /#token=([A-Za-z0-9]+)$/.exec(link)![1]!;
    const fromFirst = await first.request('POST', 'people/invite', { email: 'wanted@shared.example', role: 'owner' });
    const fromSecond = await second.request('POST', 'people/invite', { email: 'wanted@shared.example', role: 'member' });
    assert.deepEqual([fromFirst.status, fromSecond.status], [201, 201]);
    const listedBy = async (owner: DashboardClient) =>
      (await owner.request('GET', 'people')).body.data.filter((person: { email: string }) => person.email === 'wanted@shared.example');
    assert.equal((await listedBy(second)).length, 1);

    const person = new DashboardClient(instance.origin);
    const accepted = await person.request('POST', 'set-password', { token: token(fromSecond.body.link), password: PASSWORD });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    assert.equal(accepted.body.organization, 'org-second');
    const joined = await listedBy(second);
    assert.deepEqual(
      joined.map((row: { id: string; role: string; password_set: boolean }) => [row.id, row.role, row.password_set]),
      [[fromSecond.body.id, 'member', true]],
      'the invitation became the account, with its id',
    );

    // The first organization's invitation is voided: gone from its list, its id unknown, its link dead.
    assert.deepEqual(await listedBy(first), []);
    assert.equal((await first.request('POST', `people/${fromFirst.body.id}/resend`)).status, 404);
    assert.equal((await first.request('DELETE', `people/${fromFirst.body.id}`)).status, 404);
    const late = await new DashboardClient(instance.origin).request('POST', 'set-password', {
      token: token(fromFirst.body.link),
      password: PASSWORD,
    });
    assert.equal(late.status, 401);
    assert.equal(late.body.error.code, 'invalid_token');
    assert.equal((await instance.runtime.accounts.findOwnerByEmail('wanted@shared.example'))!.organizationId, 'org-second');
  });

  test('the link of an invitation to an address with an account does nothing: answered like a dead link, the invitation stays as it was', async () => {
    const owner = await ownerOf(instance, 'org-third', 'owner@third.example');
    await ownerOf(instance, 'org-fourth', 'taken@fourth.example');
    const invited = await owner.request('POST', 'people/invite', { email: 'taken@fourth.example', role: 'member' });
    const revoked = await owner.request('POST', 'people/invite', { email: 'gone@third.example', role: 'member' });
    await owner.request('DELETE', `people/${revoked.body.id}`);
    const before = (await owner.request('GET', 'people')).body;
    const token = (link: string): string => /#token=([A-Za-z0-9]+)$/.exec(link)![1]!;
    const client = new DashboardClient(instance.origin);
    const used = await client.request('POST', 'set-password', { token: token(invited.body.link), password: PASSWORD });
    const dead = await client.request('POST', 'set-password', { token: token(revoked.body.link), password: PASSWORD });
    assert.deepEqual([used.status, masked(used.body, '\u0000', '\u0000')], [dead.status, masked(dead.body, '\u0000', '\u0000')]);
    assert.equal(used.status, 401);
    assert.deepEqual((await owner.request('GET', 'people')).body, before);
    const taken = await new DashboardClient(instance.origin).signIn('taken@fourth.example', PASSWORD);
    assert.equal(taken.status, 200, 'the existing account keeps its password');
  });
});
