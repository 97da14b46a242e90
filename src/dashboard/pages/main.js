// @ts-check
// The owners' dashboard: Preact + htm components, bundled with uPlot by scripts/build-dashboard.mjs.
// Path routing under /dashboard from one table (routes.js); every control has a label and works from the
// keyboard. This file is the shell (navigation, session, the page the route table picks).
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { api, setCsrfToken, signInPath } from './api.js';
import { html, Link, navigate } from './components.js';
import { SuspensionBanner } from './people-page.js';
import { homeOf, matchRoute, navigationOf, ROUTES } from './routes.js';

/** @typedef {import('./types.js').SessionObject} SessionObject */

/** @param {SessionObject} current @param {string} next */
function landingOf(current, next) {
  const operatorPath = next.startsWith('/dashboard/operator') || next.startsWith('/dashboard/account');
  return current.role === 'operator' && !operatorPath ? homeOf('operator') : next;
}

/** @param {{ path: string, session: SessionObject, onSignOut: () => void }} props */
function Header({ path, session, onSignOut }) {
  const operator = session.role === 'operator';
  const home = homeOf(operator ? 'operator' : 'organization');
  /** @param {string} href */
  const current = (href) => path.startsWith(href) || (href === home && (path === '/dashboard' || path === '/dashboard/operator'));
  return html`<header>
    <strong class="brand">Switchyard</strong>
    <nav aria-label=${operator ? 'Operator' : 'Dashboard'}>
      <ul>
        ${navigationOf(operator ? 'operator' : 'organization').map(
          (route) => html`<li>
            <${Link} href=${route.path} aria-current=${current(route.path) ? 'page' : undefined}>${route.label}<//>
          </li>`,
        )}
      </ul>
    </nav>
    <span class="who">${session.email} · ${operator ? 'operator' : session.organization}</span>
    <button type="button" onClick=${onSignOut}>Sign out</button>
  </header>`;
}

function App() {
  const [path, setPath] = useState(location.pathname);
  const [session, setSession] = useState(/** @type {SessionObject | undefined} */ (undefined));
  const [checked, setChecked] = useState(false);
  const publicMatch = matchRoute(path, undefined);

  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    /** @param {Event} event */
    const onSignedOut = (event) => {
      setSession(undefined);
      setChecked(false);
      history.replaceState(null, '', signInPath(/** @type {CustomEvent<string>} */ (event).detail));
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
    api('session').then(
      (current) => {
        setCsrfToken(current.csrf_token);
        setSession(current);
        setChecked(true);
      },
      () => setChecked(true),
    );
  }, []);
  // A page that needs a session loads it once; the public pages (sign-in, set-password) do not.
  const needsSession = publicMatch === undefined && session === undefined && !checked;
  useEffect(() => {
    if (needsSession) loadSession();
  }, [needsSession, loadSession]);

  const area = session === undefined ? undefined : session.role === 'operator' ? 'operator' : 'organization';
  const matched = publicMatch ?? (area === undefined ? undefined : (matchRoute(path, area) ?? matchRoute(homeOf(area), area)));
  useEffect(() => {
    const titled = ROUTES.find((route) => !route.path.endsWith('/:id') && path.startsWith(route.path));
    document.title = `${titled?.label ?? 'Dashboard'} · Switchyard`;
  }, [path]);

  /** @param {SessionObject} current @param {string} next */
  const signedIn = (current, next) => {
    setCsrfToken(current.csrf_token);
    setSession(current);
    setChecked(true);
    navigate(landingOf(current, next));
  };
  const signOut = async () => {
    await api('sign-out', { method: 'POST' }).catch(() => undefined);
    setSession(undefined);
    setChecked(false);
    navigate('/dashboard/sign-in');
  };

  if (publicMatch) return html`<${publicMatch.route.page} onSignedIn=${signedIn} />`;
  if (!session || !matched) return html`<main><p>${checked ? 'Redirecting to sign-in…' : 'Loading…'}</p></main>`;

  const Page = matched.route.page;
  return html`<div class="layout">
    <a class="skip" href="#content">Skip to content</a>
    <${Header} path=${path} session=${session} onSignOut=${signOut} />
    ${area === 'operator' ? null : html`<${SuspensionBanner} />`}
    <div id="content" tabindex="-1">
      <${Page}
        key=${matched.route.path}
        id=${matched.id}
        session=${session}
        onSignedOut=${() => navigate('/dashboard/sign-in')}
        onChanged=${loadSession}
      />
    </div>
  </div>`;
}

const root = document.getElementById('app');
if (root) render(html`<${App} />`, root);
