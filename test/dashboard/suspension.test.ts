// Suspension stops more than keys (issue 40, F4), on a real server (SQLite): while an organization is
// suspended its signed file links answer 403, its dashboard is read-only (no key creation, upload,
// invitation, re-sent, re-roled or revoked invitation; no file download) while its owner still signs
// in, reads and sees the status for the banner; everything works again after reactivation. And the
// dashboard upload answers a malformed multipart body with 400, as /v1/files does (F6).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOwner, DashboardClient } from '../support/dashboard-client.ts';
import { startTestServer, type TestServer } from '../support/test-server.ts';

const PASSWORD = 'correct horse battery';

function upload(client: DashboardClient, name: string, content: string): Promise<Response> {
  const form = new FormData();
  form.append('purpose', 'user_data');
  form.append('file', new Blob([content]), name);
  return fetch(`${client.origin}/dashboard/api/files`, {
    method: 'POST',
    headers: { cookie: `switchyard_session=${client.cookie}`, 'x-csrf-token': client.csrf! },
    body: form,
  });
}

describe('a suspended organization', () => {
  let server: TestServer;
  let owner: DashboardClient;
  let operator: DashboardClient;
  let fileId: string;
  let signedLink: string;

  before(async () => {
    server = await startTestServer();
    await server.createKey({ organization: 'org-b' });
    await createOwner(server.runtime, 'org-b', 'owner@b.example', PASSWORD);
    owner = new DashboardClient(server.origin);
    assert.equal((await owner.signIn('owner@b.example', PASSWORD)).status, 200);
    const uploaded = await upload(owner, 'report.txt', 'quarterly figures');
    assert.equal(uploaded.status, 201);
    fileId = ((await uploaded.json()) as { id: string }).id;
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    signedLink = server.runtime.files.signedFileUrl(server.origin, await server.runtime.files.storeImage(png, 'image/png', 'org-b'), 600);
    const first = await fetch(signedLink);
    assert.equal(first.status, 200, await first.text());
    const issued = await server.runtime.people.createOperator('ops@b.example', server.origin);
    operator = new DashboardClient(server.origin);
    const token = /#token=([A-Za-z0-9]+)$/.exec(issued.link)![1]!;
    assert.equal((await operator.request('POST', 'set-password', { token, password: PASSWORD }, { csrf: false })).status, 200);
    assert.equal((await operator.signIn('ops@b.example', PASSWORD)).status, 200);
  });
  after(() => server.close());

  test('stops signed links, downloads, uploads, key creation and invitations; sign-in and reading go on', async () => {
    const pending = await owner.request('POST', 'people/invite', { email: 'pending@b.example', role: 'member' });
    assert.equal(pending.status, 201);
    assert.equal((await operator.request('POST', 'operator/organizations/org-b/suspend')).status, 200);

    const link = await fetch(signedLink);
    assert.equal(link.status, 403);
    assert.equal(((await link.json()) as { error: { code: string } }).error.code, 'organization_suspended');

    // A fresh sign-in works (read-only), and the organization's status is there for the banner.
    const again = new DashboardClient(server.origin);
    assert.equal((await again.signIn('owner@b.example', PASSWORD)).status, 200);
    const organization = await again.request('GET', 'organization');
    assert.equal(organization.status, 200);
    assert.equal(organization.body.status, 'suspended');
    assert.equal((await again.request('GET', 'keys')).status, 200);
    assert.equal((await again.request('GET', 'files')).status, 200);

    const download = await again.request('GET', `files/${fileId}/content`);
    assert.equal(download.status, 403);
    assert.equal(download.body.error.code, 'organization_suspended');
    const uploaded = await upload(again, 'more.txt', 'more bytes');
    assert.equal(uploaded.status, 403);
    const key = await again.request('POST', 'keys', { name: 'for later' });
    assert.equal(key.status, 403);
    assert.equal(key.body.error.code, 'organization_suspended');
    const invite = await again.request('POST', 'people/invite', { email: 'new@b.example', role: 'member' });
    assert.equal(invite.status, 403);
    // A pending invitation is neither sent again nor revoked (nor its role changed) while suspended.
    for (const [method, path, body] of [
      ['POST', `people/${pending.body.id}/resend`, undefined],
      ['POST', `people/${pending.body.id}/role`, { role: 'owner' }],
      ['DELETE', `people/${pending.body.id}`, undefined],
    ] as const) {
      const refused = await again.request(method, path, body);
      assert.equal(refused.status, 403, path);
      assert.equal(refused.body.error.code, 'organization_suspended');
    }
    const people = (await again.request('GET', 'people')).body.data;
    assert.deepEqual(
      people.map((person: { email: string; role: string; invitation: boolean }) => [person.email, person.role, person.invitation]),
      [
        ['owner@b.example', 'owner', false],
        ['pending@b.example', 'member', true],
      ],
      'nobody was added; the pending invitation is as it was',
    );
    // Their own account stays theirs: signing out works.
    assert.equal((await again.request('POST', 'sign-out')).status, 200);

    assert.equal((await operator.request('POST', 'operator/organizations/org-b/resume')).status, 200);
    assert.equal((await fetch(signedLink)).status, 200);
    assert.equal((await owner.request('GET', `files/${fileId}/content`)).status, 200);
    assert.equal((await owner.request('POST', 'keys', { name: 'after' })).status, 201);
  });

  test('the dashboard upload answers malformed multipart with 400, never 500', async () => {
    const body = '--zz\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc';
    for (const contentType of ['multipart/form-data; boundary=zz', 'multipart/form-data']) {
      const response = await fetch(`${server.origin}/dashboard/api/files`, {
        method: 'POST',
        headers: { cookie: `switchyard_session=${owner.cookie}`, 'x-csrf-token': owner.csrf!, 'content-type': contentType },
        body,
      });
      assert.equal(response.status, 400, contentType);
      const error = ((await response.json()) as { error: { type: string } }).error;
      assert.equal(error.type, 'invalid_request_error');
    }
  });
});
