/**
 * The page a browser lands on when a single sign-on fails (the provider's redirect is a page visit, so
 * the answer is a page, not JSON): what happened and what to do, in plain words, with a way back to the
 * sign-in page. Never a stack: anything but an SsoError reads as a fault on our side. Text is escaped.
 */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

export const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

/** The failure page: `code` is shown small (for the operator's logs), `message` is the sentence to read. */
export function ssoFailurePage(message: string, code: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in failed - Switchyard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css">
</head>
<body>
<main class="narrow">
<h1>Sign-in failed</h1>
<p role="alert" id="sso-error">${escapeHtml(message)}</p>
<p><a href="/dashboard/sign-in">Back to sign in</a></p>
<p class="muted"><small>Code: <code>${escapeHtml(code)}</code></small></p>
</main>
</body>
</html>
`;
}
