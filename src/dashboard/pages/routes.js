// @ts-check
// The one route table: it drives the navigation, the document title and which page a path shows.
// `audience` says who sees a route: an organization's people, operators, both, or anyone (signed out).
import { KeysPage } from './keys-page.js';
import { UsagePage } from './usage-page.js';
import { BatchesPage, BatchPage } from './batches-pages.js';
import { FilesPage } from './files-page.js';
import { ModelsPage } from './models-page.js';
import { AuditPage } from './audit-page.js';
import { AccountPage } from './account-page.js';
import { PeoplePage } from './people-page.js';
import { SignIn, SetPassword } from './sign-in.js';
import { OrganizationsPage, OrganizationPage } from './operator-pages.js';
import { PlansPage, FleetPage, OperatorAuditPage } from './operator-fleet-pages.js';
import { AlertsPage, OperatorAlertsPage } from './alerts-pages.js';
import { BudgetsPage, OperatorBudgetsPage } from './budgets-pages.js';

/**
 * @typedef {object} Route
 * @property {string} path  `/dashboard/...`; a `:id` segment is handed to the page as `id`
 * @property {string} label  the navigation entry and the document title
 * @property {(props: any) => any} page
 * @property {'organization' | 'operator' | 'everyone' | 'public'} audience
 * @property {boolean} [hidden]  routed and titled, but not in the navigation
 */

/** @type {Route[]} */
export const ROUTES = [
  { path: '/dashboard/sign-in', label: 'Sign in', page: SignIn, audience: 'public' },
  { path: '/dashboard/set-password', label: 'Choose a password', page: SetPassword, audience: 'public' },
  { path: '/dashboard/keys', label: 'Keys', page: KeysPage, audience: 'organization' },
  { path: '/dashboard/usage', label: 'Usage', page: UsagePage, audience: 'organization' },
  { path: '/dashboard/batches/:id', label: 'Batch', page: BatchPage, audience: 'organization', hidden: true },
  { path: '/dashboard/batches', label: 'Batches', page: BatchesPage, audience: 'organization' },
  { path: '/dashboard/files', label: 'Files', page: FilesPage, audience: 'organization' },
  { path: '/dashboard/models', label: 'Models', page: ModelsPage, audience: 'organization' },
  { path: '/dashboard/audit', label: 'Audit log', page: AuditPage, audience: 'organization' },
  { path: '/dashboard/people', label: 'People', page: PeoplePage, audience: 'organization' },
  { path: '/dashboard/budgets', label: 'Budgets', page: BudgetsPage, audience: 'organization' },
  { path: '/dashboard/alerts', label: 'Alerts', page: AlertsPage, audience: 'organization' },
  { path: '/dashboard/operator/organizations/:id', label: 'Organization', page: OrganizationPage, audience: 'operator', hidden: true },
  { path: '/dashboard/operator/organizations', label: 'Organizations', page: OrganizationsPage, audience: 'operator' },
  { path: '/dashboard/operator/plans', label: 'Plans', page: PlansPage, audience: 'operator' },
  { path: '/dashboard/operator/fleet', label: 'Fleet', page: FleetPage, audience: 'operator' },
  { path: '/dashboard/operator/budgets', label: 'Budgets', page: OperatorBudgetsPage, audience: 'operator' },
  { path: '/dashboard/operator/alerts', label: 'Alerts', page: OperatorAlertsPage, audience: 'operator' },
  { path: '/dashboard/operator/audit', label: 'Operator audit log', page: OperatorAuditPage, audience: 'operator' },
  { path: '/dashboard/account', label: 'Account', page: AccountPage, audience: 'everyone' },
];

/** @param {'operator' | 'organization'} area */
export const homeOf = (area) => (area === 'operator' ? '/dashboard/operator/organizations' : '/dashboard/keys');

/**
 * The route a path shows: a `:id` route when the path has exactly its shape, else the first route the
 * path starts with. `area` undefined: the public routes only.
 * @param {string} path
 * @param {'operator' | 'organization' | undefined} area
 * @returns {{ route: Route, id?: string } | undefined}
 */
export function matchRoute(path, area) {
  for (const route of ROUTES) {
    const open = route.audience === 'public' || (area !== undefined && (route.audience === 'everyone' || route.audience === area));
    if (!open) continue;
    if (route.path.endsWith('/:id')) {
      const prefix = route.path.slice(0, -'/:id'.length);
      const match = /^\/([^/]+)$/.exec(path.startsWith(prefix) ? path.slice(prefix.length) : '');
      if (match) return { route, id: decodeURIComponent(match[1] ?? '') };
    } else if (path.startsWith(route.path)) return { route };
  }
  return undefined;
}

/** The navigation of an area, in table order. @param {'operator' | 'organization'} area */
export const navigationOf = (area) => ROUTES.filter((route) => !route.hidden && (route.audience === area || route.audience === 'everyone'));
