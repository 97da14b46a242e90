/**
 * The one reading of an email address, shared by every check and by the mailer: a bare
 * `local@domain`, lower-cased, with no display name, list, quoting, comment or `%`-escape. What is
 * checked is what is stored and what is mailed (the mailer is handed the same string as a parsed
 * address object, so nodemailer never re-reads it as an RFC 5322 list): `victim<att@evil.test>` and
 * `att@evil.test,victim` are refused rather than stored as one identity and mailed to another.
 */
import { invalidParameter } from '../core/service-error.ts';

const LOCAL = "[a-z0-9!#$&'*+/=?^_{|}~-]+(?:\\.[a-z0-9!#$&'*+/=?^_{|}~-]+)*";
const DOMAIN = '[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*';
const PLAIN_ADDRESS = new RegExp(`^${LOCAL}@${DOMAIN}$`);

/** The address in its stored form (trimmed, lower case), or undefined when it is not one plain address. */
export function plainEmailAddress(input: string): string | undefined {
  const address = input.trim().toLowerCase();
  if (address.length > 254 || address.length < 3) return undefined;
  return PLAIN_ADDRESS.test(address) ? address : undefined;
}

/** The address in its stored form, or a 400 naming `param`. */
export function requirePlainEmailAddress(input: string, param = 'email'): string {
  const address = plainEmailAddress(input);
  if (address === undefined)
    throw invalidParameter(param, `"${input.slice(0, 300)}" is not one plain email address (name@example.com, nothing around it).`);
  return address;
}
