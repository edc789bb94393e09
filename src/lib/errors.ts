/**
 * The error model of the API. Every failure a client can cause is a JsonableError: it carries the
 * `code` string clients branch on, the HTTP status, the human-readable `msg`, and any extra body
 * fields (the reference's `data_fields`). The HTTP layer turns it into
 * `{"result":"error","msg":...,"code":...,...extra}`; anything else thrown is a bug and becomes a 500.
 *
 * Codes and messages are API: they are copied from the reference server and asserted in tests.
 */

export type ErrorCode =
  | 'BAD_REQUEST'
  | 'REQUEST_VARIABLE_MISSING'
  | 'REQUEST_VARIABLE_INVALID'
  | 'REQUEST_CONFUSING_VAR'
  | 'INVALID_JSON'
  | 'BAD_IMAGE'
  | 'BAD_NARROW'
  | 'MISSING_HTTP_EVENT_HEADER'
  | 'UNSUPPORTED_WEBHOOK_EVENT_TYPE'
  | 'ANOMALOUS_WEBHOOK_PAYLOAD'
  | 'STREAM_DOES_NOT_EXIST'
  | 'UNAUTHORIZED_PRINCIPAL'
  | 'STREAM_WILDCARD_MENTION_NOT_ALLOWED'
  | 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED'
  | 'BAD_EVENT_QUEUE_ID'
  | 'CSRF_FAILED'
  | 'INVITATION_FAILED'
  | 'INVALID_ZULIP_SERVER'
  | 'INVALID_PUSH_DEVICE_TOKEN'
  | 'INVALID_REMOTE_PUSH_DEVICE_TOKEN'
  | 'INVALID_MARKDOWN_INCLUDE_STATEMENT'
  | 'INVALID_API_KEY'
  | 'INVALID_SUBDOMAIN'
  | 'UNAUTHORIZED'
  | 'AUTHENTICATION_FAILED'
  | 'USER_DEACTIVATED'
  | 'REALM_DEACTIVATED'
  | 'PASSWORD_AUTH_DISABLED'
  | 'PASSWORD_RESET_REQUIRED'
  | 'RATE_LIMIT_HIT'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'REACTION_ALREADY_EXISTS'
  | 'REACTION_DOES_NOT_EXIST'
  | 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED'
  | 'CANNOT_DEACTIVATE_LAST_USER'
  | 'CANNOT_ADMINISTER_CHANNEL'
  | 'CANNOT_MANAGE_DEFAULT_CHANNEL'
  | 'CHANNEL_ALREADY_EXISTS'
  | 'EXPECTATION_MISMATCH'
  | 'SYSTEM_GROUP_REQUIRED'
  | 'CANNOT_DEACTIVATE_GROUP_IN_USE'
  | 'INSUFFICIENT_STORAGE'
  | 'INTERNAL_SERVER_ERROR';

export type ErrorBody = {
  result: 'error';
  msg: string;
  code: ErrorCode;
  [extra: string]: unknown;
};

export class JsonableError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number;
  readonly extra: Readonly<Record<string, unknown>>;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    msg: string,
    opts: {
      code?: ErrorCode;
      status?: number;
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(msg);
    this.name = 'JsonableError';
    this.code = opts.code ?? 'BAD_REQUEST';
    this.httpStatus = opts.status ?? 400;
    this.extra = opts.extra ?? {};
    this.headers = opts.headers ?? {};
  }

  toBody(): ErrorBody {
    return { result: 'error', msg: this.message, code: this.code, ...this.extra };
  }
}

/** DELETE /users/me by the realm's only user or only owner (the reference's error of that name). */
export class CannotDeactivateLastUserError extends JsonableError {
  constructor(isLastOwner: boolean) {
    const entity = isLastOwner ? 'organization owner' : 'user';
    super(`Cannot deactivate the only ${entity}.`, {
      code: 'CANNOT_DEACTIVATE_LAST_USER',
      extra: { is_last_owner: isLastOwner, entity },
    });
  }
}

/** `Missing '<name>' argument`, with `var_name`. */
export class RequestVariableMissingError extends JsonableError {
  constructor(readonly varName: string) {
    super(`Missing '${varName}' argument`, {
      code: 'REQUEST_VARIABLE_MISSING',
      extra: { var_name: varName },
    });
  }
}

/** A parameter that is present but has the wrong shape; the message names it. */
export class ParamValidationError extends JsonableError {
  constructor(msg: string, code: ErrorCode = 'BAD_REQUEST') {
    super(msg, { code });
  }
}

/**
 * The challenge of a 401 on a route a browser uses (/json/, media, by session): a scheme no browser
 * answers with its own login dialog, as the reference's `Session realm=...`.
 */
export const SESSION_CHALLENGE = 'Session realm="confab"';

/**
 * Authentication failures on API routes. Always 401 with code UNAUTHORIZED and a
 * `WWW-Authenticate` challenge, whatever the underlying reason (bad key, deactivated, wrong realm).
 */
export class UnauthorizedError extends JsonableError {
  constructor(msg = 'Not logged in: API authentication or user session required') {
    super(msg, {
      code: 'UNAUTHORIZED',
      status: 401,
      headers: { 'WWW-Authenticate': 'Basic realm="confab"' },
    });
  }
}

export class AuthenticationFailedError extends JsonableError {
  constructor() {
    super('Your username or password is incorrect', {
      code: 'AUTHENTICATION_FAILED',
      status: 401,
    });
  }
}

export class UserDeactivatedError extends JsonableError {
  constructor() {
    super('Account is deactivated', { code: 'USER_DEACTIVATED', status: 401 });
  }
}

export class RealmDeactivatedError extends JsonableError {
  constructor() {
    super('This organization has been deactivated', { code: 'REALM_DEACTIVATED', status: 401 });
  }
}

export class StreamDoesNotExistError extends JsonableError {
  constructor(stream: string) {
    super(`Channel '${stream}' does not exist`, {
      code: 'STREAM_DOES_NOT_EXIST',
      extra: { stream },
    });
  }
}

export class StreamWithIdDoesNotExistError extends JsonableError {
  constructor(streamId: number) {
    super(`Channel with ID '${streamId}' does not exist`, {
      code: 'STREAM_DOES_NOT_EXIST',
      extra: { stream_id: streamId },
    });
  }
}

export class BadEventQueueIdError extends JsonableError {
  constructor(queueId: string) {
    super(`Bad event queue ID: ${queueId}`, {
      code: 'BAD_EVENT_QUEUE_ID',
      extra: { queue_id: queueId },
    });
  }
}

export class InsufficientPermissionError extends JsonableError {
  constructor() {
    super('Insufficient permission');
  }
}

export class OrganizationAdministratorRequiredError extends JsonableError {
  constructor() {
    super('Must be an organization administrator', { code: 'UNAUTHORIZED_PRINCIPAL' });
  }
}

export class OrganizationOwnerRequiredError extends JsonableError {
  constructor() {
    super('Must be an organization owner', { code: 'UNAUTHORIZED_PRINCIPAL' });
  }
}

/** Endpoints for people only (the reference's human_users_only). */
export class HumanUsersOnlyError extends JsonableError {
  constructor() {
    super('This endpoint does not accept bot requests.');
  }
}

/** A parameter whose value cannot be used: "Bad value for 'x': v" (with var_name, bad_value). */
export class RequestVariableConversionError extends JsonableError {
  constructor(varName: string, badValue: unknown) {
    super(`Bad value for '${varName}': ${String(badValue)}`, {
      code: 'REQUEST_VARIABLE_INVALID',
      extra: { var_name: varName, bad_value: badValue },
    });
  }
}

export class ResourceNotFoundError extends JsonableError {
  constructor(msg = 'Not Found') {
    super(msg, { code: 'NOT_FOUND', status: 404 });
  }
}

export class RequestTooLargeError extends JsonableError {
  constructor(limitBytes: number) {
    super(`Request body too large (limit: ${limitBytes} bytes)`, {
      code: 'REQUEST_TOO_LARGE',
      status: 413,
    });
  }
}

/**
 * 429 RATE_LIMIT_HIT. `retry-after` (and the `Retry-After` header) is whole seconds, rounded up:
 * the API description types it as an integer and HTTP's header takes only whole seconds; waiting
 * that long always suffices. (The reference sends the fraction, e.g. 28.7.)
 */
export class RateLimitedError extends JsonableError {
  constructor(secondsToFreedom: number) {
    const retryAfter = Math.max(1, Math.ceil(secondsToFreedom - 1e-9));
    super('API usage exceeded rate limit', {
      code: 'RATE_LIMIT_HIT',
      status: 429,
      extra: { 'retry-after': retryAfter },
      headers: { 'Retry-After': String(retryAfter) },
    });
  }
}

/**
 * 507: a write failed because the disk is full (Confab's own code; the reference has none). The
 * write changed nothing (its transaction rolled back); reads still work, and writes again once
 * space is freed.
 */
export class InsufficientStorageError extends JsonableError {
  constructor() {
    super('The server is out of storage space; try again later', {
      code: 'INSUFFICIENT_STORAGE',
      status: 507,
    });
  }
}

/** The error a client sees for a low-level failure that is the disk being full; null if not. */
export function storageFullError(err: unknown): InsufficientStorageError | null {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT'
    ? new InsufficientStorageError()
    : null;
}

/**
 * A move's notices were rendered (before the realm actor ran the move) for facts that no longer
 * hold: a channel, topic or user was renamed, or the message moved, in between. The edit endpoint
 * renders them again and retries; a client sees this only when that keeps happening.
 */
export class StaleNoticesError extends JsonableError {
  constructor() {
    super('The message was changed while this edit was being prepared; please try again.');
  }
}

/** A confirmation link (an e-mail change) that does not exist, or no longer works. */
export class ConfirmationLinkError extends JsonableError {
  constructor(expired: boolean) {
    super(
      expired
        ? 'The confirmation link has expired or been deactivated.'
        : "Whoops. We couldn't find your confirmation link in the system.",
      { code: 'NOT_FOUND', status: 404 },
    );
  }
}

/**
 * Why `err` must stop the server, or null when it need not: SQLite reporting its database corrupt
 * (docs/robustness.md "Unexpected exceptions"; the process-level last resort, src/process-guard.ts,
 * stops the process for it wherever it is caught).
 */
export function fatalReason(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB')) {
    return `the database is corrupt (${code})`;
  }
  return null;
}

export function internalErrorBody(): { result: 'error'; msg: string; code: ErrorCode } {
  return { result: 'error', msg: 'Internal server error', code: 'INTERNAL_SERVER_ERROR' };
}

// ---- refusals the API repeats in many places (one class each, so the wording stays one) ------

/** A channel that does not exist or that the user may not reach (never says which). */
export class InvalidChannelIdError extends JsonableError {
  constructor() {
    super('Invalid channel ID');
  }
}

export class NoSuchUserError extends JsonableError {
  constructor() {
    super('No such user');
  }
}

export class GuestNotAllowedError extends JsonableError {
  constructor() {
    super('Not allowed for guest users');
  }
}

/** The acting account is deactivated (inside a mutation; authentication answers 401 instead). */
export class AccountDeactivatedError extends JsonableError {
  constructor() {
    super('Account is deactivated');
  }
}

export class InvalidUserGroupError extends JsonableError {
  constructor() {
    super('Invalid user group');
  }
}

export class UserGroupDeactivatedError extends JsonableError {
  constructor() {
    super('User group is deactivated.');
  }
}

/** Messages that do not exist or that the user may not read (never says which). */
export class InvalidMessagesError extends JsonableError {
  constructor() {
    super('Invalid message(s)');
  }
}

export class MissingTopicError extends JsonableError {
  constructor() {
    super('Missing topic');
  }
}

export class NoPostPermissionError extends JsonableError {
  constructor() {
    super('You do not have permission to post in this channel.');
  }
}

export class UserNotAuthorizedForQueryError extends JsonableError {
  constructor() {
    super('User not authorized for this query');
  }
}

/** Bot storage: a key the user has not stored (reference: lib/bot_storage.py's StateError). */
export class BotStorageKeyMissingError extends JsonableError {
  constructor() {
    super('Key does not exist.');
  }
}
