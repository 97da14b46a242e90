/**
 * `switchyard webhooks list|add|remove|test|deliveries`: the operators' webhook endpoints (they
 * receive every organization's budget alerts) and the delivery log, beside the console's Alerts page
 * (same service, same operators' audit log, actor `cli`). `test` only queues the sample: a running
 * instance's dispatcher sends it.
 */
import { CLI_ACTOR } from '../accounts/organizations.ts';
import type { Config } from '../config/index.ts';
import { AlertDeliveriesRepository, type DeliveryStatus } from '../db/repositories/alert-deliveries-repository.ts';
import { WebhookEndpointsRepository } from '../db/repositories/webhook-endpoints-repository.ts';
import { SigningSecrets } from '../services/alerts/signing-secrets.ts';
import { WebhookEndpoints } from '../services/alerts/webhook-endpoints.ts';
import { CliUsageError, type ParsedArguments } from './arguments.ts';
import { commaList, withOperatorServices } from './operator-services.ts';

const USAGE = `Usage: switchyard webhooks list [--json]
       switchyard webhooks add --url <https://...> [--events budget.threshold_reached,budget.projected_to_exceed] [--description D] [--json]
       switchyard webhooks remove <endpoint id>
       switchyard webhooks test <endpoint id>
       switchyard webhooks deliveries [--org O] [--status pending|delivered|failed] [--limit N] [--json]`;

const when = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19));

function flagText(parsed: ParsedArguments, name: string): string | undefined {
  const value = parsed.flags[name];
  if (value === true) throw new CliUsageError(`--${name} takes a value.\n\n${USAGE}`);
  return value;
}

export async function webhooksCommand(config: Config, parsed: ParsedArguments, print: (text: string) => void): Promise<void> {
  const [action, id] = parsed.positionals;
  const json = parsed.flags['json'] === true;
  await withOperatorServices(config, async ({ organizations, database }) => {
    const endpoints = new WebhookEndpoints({
      endpoints: new WebhookEndpointsRepository(database.db),
      deliveries: new AlertDeliveriesRepository(database.db),
      secrets: new SigningSecrets(config.alerts.webhooks.secretsKey),
      config: config.alerts,
      onQueued: () => undefined,
    });
    switch (action) {
      case 'list': {
        const rows = await endpoints.list(null);
        if (json) return print(JSON.stringify(rows));
        print('endpoint | url | events | description | added');
        for (const row of rows) print([row.id, row.url, row.events.join(','), row.description ?? '-', when(row.createdAt)].join(' | '));
        if (rows.length === 0) print('No operator webhook endpoints.');
        return;
      }
      case 'add': {
        const events = flagText(parsed, 'events');
        const body = {
          url: flagText(parsed, 'url'),
          description: flagText(parsed, 'description'),
          ...(events === undefined ? {} : { events: commaList(events) }),
        };
        const created = await endpoints.create(null, body, CLI_ACTOR.email);
        await organizations.audit(CLI_ACTOR, 'webhook.created', null, created.endpoint.id, { url: created.endpoint.url });
        if (json) return print(JSON.stringify({ ...created.endpoint, secret: created.secret }));
        print(
          `Added ${created.endpoint.id} (${created.endpoint.url}), receiving ${created.endpoint.events.join(', ')} of every organization.`,
        );
        print('Signing secret (shown once; the endpoint verifies webhook-signature with it):');
        print(created.secret);
        return;
      }
      case 'remove': {
        if (id === undefined) throw new CliUsageError(USAGE);
        await endpoints.remove(null, id);
        await organizations.audit(CLI_ACTOR, 'webhook.deleted', null, id, null);
        return print(`Removed ${id}; its deliveries still waiting are marked failed.`);
      }
      case 'test': {
        if (id === undefined) throw new CliUsageError(USAGE);
        const queued = await endpoints.sendTest(null, id);
        return print(`Queued ${queued.id} (webhook.test) for ${queued.target}; a running instance sends it (see: webhooks deliveries).`);
      }
      case 'deliveries':
        return printDeliveries(endpoints, parsed, json, print);
      default:
        throw new CliUsageError(USAGE);
    }
  });
}

async function printDeliveries(
  endpoints: WebhookEndpoints,
  parsed: ParsedArguments,
  json: boolean,
  print: (text: string) => void,
): Promise<void> {
  const organization = flagText(parsed, 'org');
  const status = flagText(parsed, 'status');
  const limit = Number(flagText(parsed, 'limit') ?? 50);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new CliUsageError('--limit is a whole number from 1 to 1000.');
  const page = await endpoints.deliveries({
    scope: null,
    limit,
    ...(organization === undefined ? {} : { organizationId: organization }),
    ...(status === undefined ? {} : { status: status as DeliveryStatus }),
  });
  if (json) return print(JSON.stringify(page.rows));
  print('delivery | queued | organization | event | to | status | attempts | last error');
  for (const row of page.rows) {
    print(
      [
        row.id,
        when(row.createdAt),
        row.organizationId ?? '(operators)',
        row.eventType,
        `${row.kind}:${row.target}`,
        row.status,
        row.attempts,
        row.lastError ?? '-',
      ].join(' | '),
    );
  }
  if (page.rows.length === 0) print('No deliveries.');
  else if (page.hasMore) print(`(more: --limit ${Math.min(1000, limit * 2)})`);
}
