/**
 * What every resource plugin under api/ shares: the dependencies, the session context the shared hook
 * (session-hook.ts) puts on the request, the route access option, the zod body parser that answers the
 * SPEC 400, and the session cookie's options.
 */
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { KeyService } from '../../accounts/key-service.ts';
import type { OrganizationService } from '../../accounts/organizations.ts';
import type { OwnerAccounts } from '../../accounts/owner-accounts.ts';
import type { PeopleService } from '../../accounts/people.ts';
import type { BatchService } from '../../batches/batch-service.ts';
import type { Config } from '../../config/index.ts';
import { invalidParameter } from '../../core/service-error.ts';
import type { OperatorAuditRepository } from '../../db/repositories/operator-audit-repository.ts';
import type { OwnerRecord, SessionRecord } from '../../db/repositories/owners-repository.ts';
import type { UsageRollupsRepository } from '../../db/repositories/usage-rollups-repository.ts';
import type { DeploymentStateStore } from '../../limits/deployment-state.ts';
import type { AccountUsageReader } from '../../services/account-usage.ts';
import type { FileService } from '../../services/files/file-service.ts';
import type { Access } from '../dashboard-access.ts';

export const SESSION_COOKIE = 'switchyard_session';
export const CSRF_HEADER = 'x-csrf-token';

export interface OperatorApiDependencies {
  organizations: OrganizationService;
  operatorAudit: OperatorAuditRepository;
  people: PeopleService;
  /** The routing state the router uses (shared through Redis when set): the fleet page's deployments. */
  deploymentState: DeploymentStateStore;
}

export interface DashboardApiDependencies {
  config: Config;
  accounts: OwnerAccounts;
  keys: KeyService;
  usage: AccountUsageReader;
  rollups: UsageRollupsRepository;
  batches: BatchService;
  files: FileService;
  /** Absolute session lifetime, for the cookie's Max-Age. */
  sessionMaxAgeSeconds: number;
  /** The operator console and people management (api/operator-*.ts, api/people.ts); absent: not mounted. */
  operator?: OperatorApiDependencies;
}

/** The dependencies of the plugins that need the operator services (mounted only when they exist). */
export type WithOperator = DashboardApiDependencies & { operator: OperatorApiDependencies };

export interface DashboardContext {
  token: string;
  session: SessionRecord;
  owner: OwnerRecord;
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

export function cookieOptions(request: FastifyRequest): { path: string; httpOnly: true; sameSite: 'lax'; secure: boolean } {
  return {
    path: '/dashboard',
    httpOnly: true,
    sameSite: 'lax',
    // Secure whenever the owner reached us over TLS (directly or through a proxy that says so).
    secure: request.protocol === 'https' || request.headers['x-forwarded-proto'] === 'https',
  };
}
