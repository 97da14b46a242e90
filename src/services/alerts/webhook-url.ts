/**
 * Which webhook URLs may be registered (a 400 naming `url` otherwise): at most 2,048 characters,
 * `https://` (plain `http://` only with ALERT_WEBHOOKS_ALLOW_HTTP), no credentials or fragment, and a
 * host that is public (core/public-address.ts): an address literal is checked as it is, `localhost`
 * names are refused, and a name that resolves only to non-public addresses is refused. A name that
 * does not resolve now is accepted (DNS may be away for a moment); what counts is the check every
 * delivery makes on the address it connects to (webhook-sender.ts). Private addresses only with
 * ALERT_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES.
 */
import { lookup } from 'node:dns/promises';
import { addressLiteralOf, isPublicAddress } from '../../core/public-address.ts';
import { invalidParameter, missingParameter } from '../../core/service-error.ts';

/** The longest URL accepted, characters (browsers and most servers take 2,048 at least). */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** Longest wait for the registration-time DNS check, ms. */
const LOOKUP_TIMEOUT_MS = 2_000;

export interface WebhookUrlPolicy {
  allowHttp: boolean;
  allowPrivateAddresses: boolean;
}

/** The addresses a name resolves to; an empty list when it does not resolve (in time). */
export type ResolveHost = (hostname: string) => Promise<string[]>;

export const resolveHost: ResolveHost = async (hostname) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), LOOKUP_TIMEOUT_MS);
  });
  try {
    const answered = lookup(hostname, { all: true, verbatim: true }).then(
      (entries) => entries.map((entry) => entry.address),
      () => [],
    );
    return await Promise.race([answered, timeout]);
  } finally {
    clearTimeout(timer);
  }
};

/** The URL as it will be stored (normalised by the WHATWG parser), or a 400 with `param: url`. */
export async function checkWebhookUrl(value: unknown, policy: WebhookUrlPolicy, resolve: ResolveHost = resolveHost): Promise<string> {
  if (value === undefined || value === null || value === '') throw missingParameter('url', "Missing required parameter: 'url'.");
  if (typeof value !== 'string') throw invalidParameter('url', 'url must be a string.');
  if (value.length > MAX_WEBHOOK_URL_LENGTH) throw invalidParameter('url', `url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidParameter('url', 'url is not a valid URL: use https://host/path.');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw invalidParameter(
      'url',
      url.protocol === 'http:'
        ? 'url must use https:// (plain http:// is allowed only when the operator sets ALERT_WEBHOOKS_ALLOW_HTTP=on).'
        : 'url must use https://.',
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw invalidParameter('url', 'url must not carry a user name or password: deliveries are signed instead (webhook-signature).');
  }
  if (url.hash !== '') throw invalidParameter('url', 'url must not have a #fragment.');
  if (!policy.allowPrivateAddresses) await checkPublicHost(url, resolve);
  return url.href;
}

const PRIVATE_HOST =
  'url points to a private, loopback or other non-public address (allowed only when the operator sets ALERT_WEBHOOKS_ALLOW_PRIVATE_ADDRESSES=on).';

async function checkPublicHost(url: URL, resolve: ResolveHost): Promise<void> {
  const literal = addressLiteralOf(url);
  if (literal !== undefined) {
    if (!isPublicAddress(literal)) throw invalidParameter('url', PRIVATE_HOST);
    return;
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) throw invalidParameter('url', PRIVATE_HOST);
  const addresses = await resolve(host);
  if (addresses.length > 0 && !addresses.some(isPublicAddress)) throw invalidParameter('url', PRIVATE_HOST);
}
