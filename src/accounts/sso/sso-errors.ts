/**
 * What a failed single sign-on says to the person: a code for tests and logs, an HTTP status, and a
 * sentence that says what happened and what to do, never a stack. `fromProviderError` maps what
 * openid-client (over oauth4webapi) throws, by its documented error classes and codes
 * (https://github.com/panva/openid-client/blob/v6.x/docs/README.md, "Errors").
 */
import * as oidc from 'openid-client';

export type SsoErrorCode =
  | 'unknown_provider'
  | 'provider_unreachable'
  | 'consent_denied'
  | 'provider_refused'
  | 'state_unknown'
  | 'state_expired'
  | 'browser_mismatch'
  | 'wrong_audience'
  | 'wrong_issuer'
  | 'invalid_signature'
  | 'token_expired'
  | 'token_invalid'
  | 'email_unverified'
  | 'no_access'
  | 'account_exists'
  | 'organization_mismatch'
  | 'role_mismatch'
  | 'too_many_sign_ins';

export class SsoError extends Error {
  constructor(
    readonly code: SsoErrorCode,
    readonly status: number,
    message: string,
    /** The underlying error, logged (never shown). */
    readonly detail?: unknown,
  ) {
    super(message);
    this.name = 'SsoError';
  }
}

/** The first `claim` named along an error's cause chain (oauth4webapi puts it in the cause of a claim check). */
function claimOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const cause = (current as { cause?: unknown }).cause;
    if (typeof cause === 'object' && cause !== null && typeof (cause as { claim?: unknown }).claim === 'string')
      return (cause as { claim: string }).claim;
    current = cause;
  }
  return undefined;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** Maps an error of discovery or of the code exchange with `label`'s provider to what the person reads. */
export function fromProviderError(error: unknown, label: string, clockToleranceSeconds: number): SsoError {
  if (error instanceof SsoError) return error;
  if (error instanceof oidc.AuthorizationResponseError) {
    if (error.error === 'access_denied')
      return new SsoError(
        'consent_denied',
        403,
        `${label} did not let you in: the sign-in was cancelled or consent was refused. Start again to retry.`,
        error,
      );
    return new SsoError(
      'provider_refused',
      400,
      `${label} refused the sign-in (${error.error}${error.error_description ? `: ${error.error_description}` : ''}).`,
      error,
    );
  }
  if (error instanceof oidc.ResponseBodyError)
    return new SsoError('provider_refused', 400, `${label} refused to complete the sign-in (${error.error}). Start again.`, error);
  const code = codeOf(error);
  if (code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED') {
    const claim = claimOf(error);
    if (claim === 'aud' || claim === 'azp')
      return new SsoError(
        'wrong_audience',
        401,
        `The ID token from ${label} was issued to another application (its audience is not this server's client id). Check the client id on both sides.`,
        error,
      );
    if (claim === 'iss')
      return new SsoError(
        'wrong_issuer',
        401,
        `The ID token did not come from ${label}'s issuer. Check the issuer URL in the configuration.`,
        error,
      );
    return new SsoError(
      'token_invalid',
      401,
      `The ID token from ${label} does not belong to this sign-in (its ${claim ?? 'claims'} did not match). Start again.`,
      error,
    );
  }
  if (code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED')
    return new SsoError(
      'token_expired',
      401,
      `The ID token from ${label} is expired or not yet valid: it is out of date, or the clocks of ${label} and this server differ by more than ${clockToleranceSeconds} seconds. Check both clocks (NTP) and start again.`,
      error,
    );
  if (code === 'OAUTH_KEY_SELECTION_FAILED')
    // openid-client fetches the JWKS again for an unknown key id once its copy is a minute old.
    return new SsoError(
      'invalid_signature',
      401,
      `The ID token is signed with a key ${label} does not publish. If ${label} has just changed its keys, try again in a minute; otherwise the token was not made by ${label}.`,
      error,
    );
  if (
    code === 'OAUTH_INVALID_RESPONSE' &&
    /signature/i.test(String((error as Error).message) + String(((error as Error).cause as Error | undefined)?.message))
  )
    return new SsoError(
      'invalid_signature',
      401,
      `The ID token's signature does not verify with ${label}'s published keys: it was altered or not signed by ${label}.`,
      error,
    );
  if (
    error instanceof TypeError ||
    (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) ||
    code === 'OAUTH_RESPONSE_IS_NOT_CONFORM' ||
    code === 'OAUTH_RESPONSE_IS_NOT_JSON'
  )
    return new SsoError(
      'provider_unreachable',
      502,
      `${label} cannot be reached or did not answer properly. Try again in a moment; if it lasts, ask the operator (an operator may use the break-glass account).`,
      error,
    );
  return new SsoError(
    'token_invalid',
    502,
    `${label}'s answer could not be used to sign you in. Start again; if it lasts, ask the operator.`,
    error,
  );
}
