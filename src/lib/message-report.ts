/**
 * What a message report posts in the realm's moderation-request channel (POST
 * /messages/{id}/report, feature level 382): the reference's wording (lib/message_report.py
 * send_message_report). Pure: the endpoint gathers the names and the reported content.
 */
import { MAX_MESSAGE_LENGTH } from './limits.js';
import { truncateCodePoints } from './message-content.js';

/** The report types clients may choose (the reference's Realm.REPORT_MESSAGE_REASONS keys). */
export const REPORT_TYPES = ['spam', 'harassment', 'inappropriate', 'norms', 'other'] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

/** The longest description a reporter may add (Realm.MAX_REPORT_MESSAGE_EXPLANATION_LENGTH). */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;

/** The reported message is quoted up to this many code points, leaving room for the rest. */
export const MAX_REPORT_SNIPPET_LENGTH = MAX_MESSAGE_LENGTH - MAX_REPORT_DESCRIPTION_LENGTH - 500;

/** The refusal when the realm has no moderation-request channel (or it is archived). */
export const REPORTING_DISABLED = 'Message reporting is not enabled in this organization.';

export type ReportPerson = { id: number; full_name: string };

export type ReportedMessage = {
  id: number;
  sender: ReportPerson;
  content: string;
} & (
  | { kind: 'channel'; channel_name: string; topic: string }
  /** Every member of the conversation, the sender included, ordered by id. */
  | { kind: 'direct'; members: readonly ReportPerson[] }
);

/** `@_**Name|id**`: a mention that notifies nobody. */
export function silentMention(u: ReportPerson): string {
  return `@_**${u.full_name}|${u.id}**`;
}

/** A code fence longer than any fence opening a line of `content` (get_unused_fence). */
export function unusedFence(content: string): string {
  let length = 3;
  for (const m of content.matchAll(/^ {0,3}(`{3,})/gm)) length = Math.max(length, m[1]!.length + 1);
  return '`'.repeat(length);
}

/** The topic reports about `sender` go to. */
export function reportTopic(sender: ReportPerson): string {
  return `${sender.full_name}'s moderation requests`;
}

/** The notice's markdown. */
export function reportContent(
  reporter: ReportPerson,
  message: ReportedMessage,
  reportType: ReportType,
  description: string,
): string {
  const who = silentMention(reporter);
  const sender = silentMention(message.sender);
  let header: string;
  if (message.kind === 'channel') {
    const link = `#**${message.channel_name}>${message.topic}@${message.id}**`;
    header = `${who} reported ${link} sent by ${sender}.`;
  } else if (message.members.length <= 2) {
    header = `${who} reported a DM sent by ${sender}.`;
  } else {
    const mentions = message.members.map(silentMention);
    const last = mentions.pop()!;
    header = `${who} reported a DM sent by ${sender} to ${mentions.join(', ')}, and ${last}.`;
  }
  const quoted = truncateCodePoints(
    message.content,
    MAX_REPORT_SNIPPET_LENGTH,
    '\n[message truncated]',
  );
  const fence = unusedFence(quoted);
  return (
    `${header}\n- Reason: **${reportType}**\n- Notes:\n` +
    `\`\`\`quote\n${description}\n\`\`\`` +
    `\n${fence} spoiler **Message sent by ${sender}**\n${quoted}\n${fence}\n`
  );
}
