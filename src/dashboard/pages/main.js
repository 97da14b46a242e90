// The owners' dashboard: Preact + htm components, bundled with uPlot by scripts/build-dashboard.mjs.
// Path routing under /dashboard; every control has a label and works from the keyboard. This file is
// the shell (navigation, session, routing); each page lives in its own module beside it.
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { api, setCsrfToken, signInPath } from './api.js';
import { html, Link, navigate } from './components.js';
import { SignIn, SetPassword } from './sign-in.js';
import { KeysPage } from './keys-page.js';
import { UsagePage } from './usage-page.js';
import { BatchesPage, BatchPage } from './batches-pages.js';
import { FilesPage } from './files-page.js';
import { ModelsPage } from './models-page.js';
import { AuditPage } from './audit-page.js';
import { AccountPage } from './account-page.js';
import { PeoplePage, SuspensionBanner } from './people-page.js';
import { OrganizationsPage, OrganizationPage } from './operator-pages.js';
import { PlansPage, FleetPage, OperatorAuditPage } from './operator-fleet-pages.js';

const NAVIGATION = [
  ['/dashboard/keys', 'Keys'],
  ['/dashboard/usage', 'Usage'],
  ['/dashboard/batches', 'Batches'],
  ['/dashboard/files', 'Files'],
  ['/dashboard/models', 'Models'],
  ['/dashboard/audit', 'Audit log'],
  ['/dashboard/people', 'People'],
  ['/dashboard/account', 'Account'],
];

// Operators see the operator area only (their account page too).
const OPERATOR_NAVIGATION = [
  ['/dashboard/operator/organizations', 'Organizations'],
  ['/dashboard/operator/plans', 'Plans'],
  ['/dashboard/operator/fleet', 'Fleet'],
  ['/dashboard/operator/audit', 'Operator audit log'],
  ['/dashboard/account', 'Account'],
];

function operatorPage(path) {
  const organizationMatch = /^\/dashboard\/operator\/organizations\/([^/]+)$/.exec(path);
  if (organizationMatch) return html`<${OrganizationPage} id=${decodeURIComponent(organizationMatch[1])} />`;
  if (path.startsWith('/dashboard/operator/plans')) return html`<${PlansPage} />`;
  if (path.startsWith('/dashboard/operator/fleet')) return html`<${FleetPage} />`;
  if (path.startsWith('/dashboard/operator/audit')) return html`<${OperatorAuditPage} />`;
  return html`<${OrganizationsPage} />`;
}

function App() {
  const [path, setPath] = useState(location.pathname);
  const [session, setSession] = useState(undefined);
  const [checked, setChecked] = useState(false);
  const isPublic = path.startsWith('/dashboard/sign-in') || path.startsWith('/dashboard/set-password');

  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    const onSignedOut = (event) => {
      setSession(undefined);
      const target = signInPath(event.detail);
      history.replaceState(null, '', target);
      setPath(location.pathname);
    };
    window.addEventListener('popstate', onPop);
    window.addEventListener('dashboard:signed-out', onSignedOut);
    return () => {
      window.removeEventListener('popstate', onPop);
      window.removeEventListener('dashboard:signed-out', onSignedOut);
    };
  }, []);

  const loadSession = useCallback(() => {
    api('session', { redirectOn401: !isPublic }).then(
      (current) => {
        setCsrfToken(current.csrf_token);
        setSession(current);
        setChecked(true);
      },
      () => setChecked(true),
    );
  }, [isPublic]);
  useEffect(() => {
    if (!isPublic) loadSession();
    else setChecked(true);
  }, []);

  useEffect(() => {
    const title =
      [...OPERATOR_NAVIGATION, ...NAVIGATION].find(([href]) => path.startsWith(href))?.[1] ??
      (path.startsWith('/dashboard/sign-in') ? 'Sign in' : 'Dashboard');
    document.title = `${title} · Switchyard`;
  }, [path]);

  const signedIn = (current, next) => {
    setCsrfToken(current.csrf_token);
    setSession(current);
    const operatorPath = next.startsWith('/dashboard/operator') || next.startsWith('/dashboard/account');
    navigate(current.role === 'operator' && !operatorPath ? '/dashboard/operator/organizations' : next);
  };
  const signOut = async () => {
    await api('sign-out', { method: 'POST' }).catch(() => undefined);
    setSession(undefined);
    navigate('/dashboard/sign-in');
  };

  if (path.startsWith('/dashboard/sign-in')) return html`<${SignIn} onSignedIn=${signedIn} />`;
  if (path.startsWith('/dashboard/set-password')) return html`<${SetPassword} onSignedIn=${signedIn} />`;
  if (!session) return html`<main><p>${checked ? 'Redirecting to sign-in…' : 'Loading…'}</p></main>`;

  const operator = session.role === 'operator';
  const navigation = operator ? OPERATOR_NAVIGATION : NAVIGATION;
  const home = operator ? '/dashboard/operator/organizations' : '/dashboard/keys';
  let page;
  const batchMatch = /^\/dashboard\/batches\/([^/]+)$/.exec(path);
  if (operator && !path.startsWith('/dashboard/account')) page = operatorPage(path);
  else if (batchMatch) page = html`<${BatchPage} id=${decodeURIComponent(batchMatch[1])} />`;
  else if (path.startsWith('/dashboard/people')) page = html`<${PeoplePage} session=${session} />`;
  else if (path.startsWith('/dashboard/usage')) page = html`<${UsagePage} />`;
  else if (path.startsWith('/dashboard/batches')) page = html`<${BatchesPage} session=${session} />`;
  else if (path.startsWith('/dashboard/files')) page = html`<${FilesPage} session=${session} />`;
  else if (path.startsWith('/dashboard/models')) page = html`<${ModelsPage} />`;
  else if (path.startsWith('/dashboard/audit')) page = html`<${AuditPage} />`;
  else if (path.startsWith('/dashboard/account'))
    page = html`<${AccountPage} session=${session} onSignedOut=${() => navigate('/dashboard/sign-in')} onChanged=${loadSession} />`;
  else page = html`<${KeysPage} session=${session} />`;

  return html`<div class="layout">
    <a class="skip" href="#content">Skip to content</a>
    <header>
      <strong class="brand">Switchyard</strong>
      <nav aria-label=${operator ? 'Operator' : 'Dashboard'}><ul>${navigation.map(
        ([href, label]) =>
          html`<li><${Link} href=${href} aria-current=${path.startsWith(href) || (href === home && (path === '/dashboard' || path === '/dashboard/operator')) ? 'page' : undefined}>${label}<//></li>`,
      )}</ul></nav>
      <span class="who">${session.email} · ${operator ? 'operator' : session.organization}</span>
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    ${operator ? null : html`<${SuspensionBanner} />`}
    <div id="content" tabindex="-1">${page}</div>
  </div>`;
}

render(html`<${App} />`, document.getElementById('app'));
