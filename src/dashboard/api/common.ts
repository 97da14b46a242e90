/**
 * What every resource plugin under api/ shares: the dependencies, the session context the shared hook
 * (session-hook.ts) puts on the request, the route access option, the zod body parser that answers the
 * SPEC 400, and the session cookie's options.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { KeyService } from '../../accounts/key-service.ts';
import type { OrganizationService } from '../../accounts/organizations.ts';
import type { DashboardAccounts } from '../../accounts/dashboard-accounts.ts';
import type { PeopleService } from '../../accounts/people.ts';
import type { SsoSignIn } from '../../accounts/sso/sso-sign-in.ts';
import type { BatchService } from '../../batches/batch-service.ts';
import type { Config } from '../../config/index.ts';
import { invalidParameter } from '../../core/service-error.ts';
import type { ApiKeysRepository } from '../../db/repositories/api-keys-repository.ts';
import type { BatchesRepository } from '../../db/repositories/batches-repository.ts';
import type { FilesRepository } from '../../db/repositories/files-repository.ts';
import type { InstancesRepository } from '../../db/repositories/instances-repository.ts';
import type { OperatorAuditRepository } from '../../db/repositories/operator-audit-repository.ts';
import type { AccountRecord, OwnersRepository, SessionRecord } from '../../db/repositories/owners-repository.ts';
import type { UsageRollupsRepository } from '../../db/repositories/usage-rollups-repository.ts';
import type { DeploymentStateStore } from '../../limits/deployment-state.ts';
import type { AccountUsageReader } from '../../services/account-usage.ts';
import type { WebhookEndpoints } from '../../services/alerts/webhook-endpoints.ts';
import type { BudgetService } from '../../services/budgets/budget-service.ts';
import type { FileService } from '../../services/files/file-service.ts';
import type { Access } from '../dashboard-access.ts';
import type { PageOf } from './wire.ts';

export const SESSION_COOKIE = 'switchyard_session';
export const CSRF_HEADER = 'x-csrf-token';

export interface OperatorApiDependencies {
  organizations: OrganizationService;
  operatorAudit: OperatorAuditRepository;
  /** The instances' heartbeat rows (the fleet page). */
  instances: Pick<InstancesRepository, 'live'>;
  people: PeopleService;
  /** The routing state the router uses (shared through Redis when set): the fleet page's deployments. */
  deploymentState: DeploymentStateStore;
}

/** The paged, searchable list queries of the keys, files, batches and audit pages (db/repositories). */
export interface DashboardLists {
  keys: Pick<ApiKeysRepository, 'page'>;
  files: Pick<FilesRepository, 'list' | 'findById'>;
  batches: Pick<BatchesRepository, 'list' | 'findById'>;
  owners: Pick<OwnersRepository, 'auditPage' | 'keyRotations'>;
}

export interface DashboardApiDependencies {
  config: Config;
  accounts: DashboardAccounts;
  keys: KeyService;
  usage: AccountUsageReader;
  rollups: UsageRollupsRepository;
  batches: BatchService;
  files: FileService;
  lists: DashboardLists;
  /** Absolute session lifetime, for the cookie's Max-Age. */
  sessionMaxAgeSeconds: number;
  /** The operator console and people management (api/operator-*.ts, api/people.ts); absent: not mounted. */
  operator?: OperatorApiDependencies;
  /** Budget alerts' webhook endpoints and delivery log (api/webhooks.ts); absent: not mounted. */
  alerts?: WebhookEndpoints;
  /** Single sign-on and the password policy it sets (api/sso.ts); absent: password sign-in only. */
  sso?: SsoSignIn;
  /** The response cache's savings and purge (api/cache.ts); absent: not mounted. */
  responseCache?: ResponseCacheAdmin;
  /** Money budgets of organizations and keys (api/budgets.ts); absent: not mounted. */
  budgets?: BudgetService;
}

/** What the dashboard does with the response cache (services/cache/): its savings, and purging an organization's entries. */
export interface ResponseCacheAdmin {
  /** Every entry of the organization, on every instance; returns how many were deleted. */
  purge(organizationId: string): Promise<number>;
  /** Hits between `fromMs` and `toMs` and what they saved (tokens; integer micro-USD). */
  savings(organizationId: string, fromMs: number, toMs: number): Promise<{ hits: number; savedTokens: number; savedMicroUsd: number }>;
}

/** The dependencies of the plugins that need the operator services (mounted only when they exist). */
export type WithOperator = DashboardApiDependencies & { operator: OperatorApiDependencies };

export interface DashboardContext {
  token: string;
  session: SessionRecord;
  owner: AccountRecord;
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboard: DashboardContext | undefined;
  }
  interface FastifyContextConfig {
    dashboardAccess?: Access;
  }
}

/** The route option naming who may call a route (dashboard-access.ts); the shared hook reads it. */
export const access = (who: Access) => ({ config: { dashboardAccess: who } });

/** The signed-in person of a route that is not public (the shared hook has set it). */
export const signedIn = (request: FastifyRequest): DashboardContext => request.dashboard!;

/** Where a request came from, for sessions and audit rows. */
export const client = (request: FastifyRequest) => ({ address: request.ip, userAgent: request.headers['user-agent'] ?? null });

/** Parses a JSON body (or a query) with zod into the SPEC 400 (first problem, with its field as `param`). */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const param = issue.path.join('.') || null;
  throw invalidParameter(param, `${param ?? 'body'}: ${issue.message}`);
}

/** `?limit=&after=&q=` of a paged list: 1-100 rows (50 unless asked), a cursor, a search text. */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  after: z.string().min(1).max(200).optional(),
  q: z
    .string()
    .trim()
    .max(200)
    .optional()
    .transform((text) => (text === '' ? undefined : text)),
});
export type PageQuery = z.infer<typeof pageQuery>;

/** One page of a list read with `limit + 1` rows: the extra row only says that more follow. */
export function pageOf<Row, Out>(rows: Row[], limit: number, toWire: (row: Row) => Out, cursor: (row: Row) => string): PageOf<Out> {
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  const last = page[page.length - 1];
  return { object: 'list', data: page.map(toWire), has_more: hasMore, next: hasMore && last !== undefined ? cursor(last) : null };
}

export function cookieOptions(request: FastifyRequest): { path: string; httpOnly: true; sameSite: 'lax'; secure: boolean } {
  return {
    path: '/dashboard',
    httpOnly: true,
    sameSite: 'lax',
    // Secure whenever the owner reached us over TLS (directly or through a proxy that says so).
    secure: request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https',
  };
}
