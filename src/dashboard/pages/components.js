// Pieces every dashboard page uses: the htm binding, path navigation, formatting, errors, polling.
import { h } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import htm from 'htm';

export const html = htm.bind(h);

export function navigate(path) {
  history.pushState(null, '', path);
  window.dispatchEvent(new Event('popstate'));
}

export function Link({ href, children, ...rest }) {
  const onClick = (event) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(href);
  };
  return html`<a href=${href} onClick=${onClick} ...${rest}>${children}</a>`;
}

export const day = (ms) => (ms === null || ms === undefined ? '—' : new Date(ms).toISOString().slice(0, 10));
export const dateTime = (ms) =>
  ms === null || ms === undefined ? '—' : new Date(ms).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
export const number = (value) => Number(value).toLocaleString('en-US');
export const usd = (value) => `$${Number(value).toFixed(4)}`;
export const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

export function ErrorNote({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error.message}</p>`;
}

export function usePoll(load, intervalMs) {
  const [state, setState] = useState({ data: undefined, error: undefined });
  const refresh = useCallback(
    () =>
      load().then(
        (data) => setState({ data, error: undefined }),
        (error) => setState((old) => ({ ...old, error })),
      ),
    [load],
  );
  useEffect(() => {
    refresh();
    if (!intervalMs) return undefined;
    const timer = setInterval(refresh, intervalMs);
    return () => clearInterval(timer);
  }, [refresh, intervalMs]);
  return [state, refresh];
}
