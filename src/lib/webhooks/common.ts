/**
 * What every incoming webhook shares (docs/integrations.md "Incoming webhooks"): the errors, as
 * the reference's (zerver/lib/exceptions.py UnsupportedWebhookEventTypeError,
 * AnomalousWebhookPayloadError, MissingHTTPEventHeaderError), and payload validation with zod.
 */
import type { z } from 'zod';
import { JsonableError } from '../errors.js';

/** One message an integration posts: its topic (unless the URL names one) and content. */
export type WebhookMessage = { topic: string; content: string };

/** What an integration is given: the payload, the request's headers (lower case) and query. */
export type WebhookInput = {
  payload: unknown;
  headers: Readonly<Record<string, string>>;
  query: Readonly<Record<string, string>>;
};

export type Integration = {
  /** The name in the URL: /api/v1/external/<name>. */
  name: string;
  /** The name messages and errors give it. */
  displayName: string;
  /** Turns a payload into the messages to post (none: the event is acknowledged, not posted). */
  handle: (input: WebhookInput) => WebhookMessage[];
};

export class UnsupportedWebhookEventTypeError extends JsonableError {
  constructor(webhookName: string, eventType: string) {
    super(
      `The '${eventType}' event isn't currently supported by the ${webhookName} webhook; ignoring`,
      {
        code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE',
        extra: { webhook_name: webhookName, event_type: eventType },
      },
    );
  }
}

export class AnomalousWebhookPayloadError extends JsonableError {
  constructor(webhookName: string) {
    super(`Unable to parse request: Did ${webhookName} generate this event?`, {
      code: 'ANOMALOUS_WEBHOOK_PAYLOAD',
      extra: { webhook_name: webhookName },
    });
  }
}

export class MissingHttpEventHeaderError extends JsonableError {
  constructor(header: string) {
    super(`Missing the HTTP event header '${header}'`, {
      code: 'MISSING_HTTP_EVENT_HEADER',
      extra: { header },
    });
  }
}

/** The payload as `schema` wants it, or the reference's "Did X generate this event?" error. */
export function parsePayload<T extends z.ZodType>(
  webhookName: string,
  schema: T,
  value: unknown,
): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw new AnomalousWebhookPayloadError(webhookName);
  return r.data;
}

/** `<time:…>` for an ISO 8601 time (the reference's datetime_to_global_time). */
export function globalTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return `<time:${new Date(ms).toISOString().replace('.000Z', 'Z')}>`;
}

/** A setup message (the reference's get_setup_webhook_message). */
export function setupMessage(integration: string, userName?: string): string {
  return `${integration} webhook has been successfully configured${userName ? ` by ${userName}` : ''}.`;
}
