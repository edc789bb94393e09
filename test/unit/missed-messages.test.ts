/**
 * The pure parts of missed-message mail: which trigger a message has for a recipient (the
 * reference's get_email_notification_trigger order and settings), who counts as away, and the
 * message content made fit for a mail (src/lib/missed-messages.ts, src/lib/missed-message-mail.ts).
 */
import t from 'tap';
import {
  EmailTrigger,
  emailTrigger,
  isIdle,
  VisibilityPolicy,
  type EmailTriggerFacts,
} from '../../src/lib/missed-messages.js';
import { mailHtml, plainContent } from '../../src/lib/missed-message-mail.js';

const URL = 'https://chat.example.org';

function facts(over: Partial<EmailTriggerFacts> = {}): EmailTriggerFacts {
  return {
    settings: {
      enable_offline_email_notifications: true,
      enable_stream_email_notifications: false,
      enable_followed_topic_email_notifications: true,
      enable_followed_topic_wildcard_mentions_notify: true,
      wildcard_mentions_notify: true,
      ...over.settings,
    },
    direct: false,
    mentioned: false,
    streamWildcardMentioned: false,
    topicWildcardMentioned: false,
    subscription: { is_muted: false, email_notifications: null, wildcard_mentions_notify: null },
    visibilityPolicy: VisibilityPolicy.INHERIT,
    ...over,
    ...(over.settings ? { settings: { ...facts().settings, ...over.settings } } : {}),
  };
}

t.test('triggers, most salient first', (t) => {
  t.equal(emailTrigger(facts({ direct: true, mentioned: true })), EmailTrigger.DIRECT_MESSAGE);
  t.equal(
    emailTrigger(
      facts({ direct: true, settings: { enable_offline_email_notifications: false } as never }),
    ),
    null,
    'direct messages follow enable_offline_email_notifications',
  );
  t.equal(
    emailTrigger(facts({ mentioned: true, streamWildcardMentioned: true })),
    EmailTrigger.MENTION,
  );
  t.equal(
    emailTrigger(
      facts({
        mentioned: true,
        subscription: { is_muted: true, email_notifications: null, wildcard_mentions_notify: null },
      }),
    ),
    EmailTrigger.MENTION,
    'a mention notifies in a muted channel',
  );
  t.equal(
    emailTrigger(facts({ topicWildcardMentioned: true, streamWildcardMentioned: true })),
    EmailTrigger.TOPIC_WILDCARD_MENTION,
  );
  t.equal(
    emailTrigger(facts({ streamWildcardMentioned: true })),
    EmailTrigger.STREAM_WILDCARD_MENTION,
  );
  t.equal(
    emailTrigger(
      facts({ streamWildcardMentioned: true, visibilityPolicy: VisibilityPolicy.FOLLOWED }),
    ),
    EmailTrigger.STREAM_WILDCARD_MENTION_IN_FOLLOWED_TOPIC,
  );
  t.equal(
    emailTrigger(
      facts({ topicWildcardMentioned: true, visibilityPolicy: VisibilityPolicy.FOLLOWED }),
    ),
    EmailTrigger.TOPIC_WILDCARD_MENTION_IN_FOLLOWED_TOPIC,
  );
  t.equal(
    emailTrigger(
      facts({
        streamWildcardMentioned: true,
        settings: { wildcard_mentions_notify: false } as never,
      }),
    ),
    null,
    'wildcard_mentions_notify off',
  );
  t.equal(
    emailTrigger(
      facts({
        streamWildcardMentioned: true,
        settings: { wildcard_mentions_notify: false } as never,
        subscription: {
          is_muted: false,
          email_notifications: null,
          wildcard_mentions_notify: true,
        },
      }),
    ),
    EmailTrigger.STREAM_WILDCARD_MENTION,
    'the channel’s own setting wins over the default',
  );
  t.equal(
    emailTrigger(
      facts({ streamWildcardMentioned: true, visibilityPolicy: VisibilityPolicy.MUTED }),
    ),
    null,
    'a muted topic',
  );
  t.equal(
    emailTrigger(facts({ visibilityPolicy: VisibilityPolicy.FOLLOWED })),
    EmailTrigger.FOLLOWED_TOPIC_EMAIL,
  );
  t.equal(
    emailTrigger(
      facts({
        visibilityPolicy: VisibilityPolicy.FOLLOWED,
        settings: { enable_followed_topic_email_notifications: false } as never,
      }),
    ),
    null,
  );
  t.equal(emailTrigger(facts()), null, 'an ordinary channel message: no mail by default');
  t.equal(
    emailTrigger(facts({ settings: { enable_stream_email_notifications: true } as never })),
    EmailTrigger.STREAM_EMAIL,
  );
  t.equal(
    emailTrigger(
      facts({
        subscription: {
          is_muted: false,
          email_notifications: true,
          wildcard_mentions_notify: null,
        },
      }),
    ),
    EmailTrigger.STREAM_EMAIL,
  );
  t.equal(
    emailTrigger(
      facts({
        subscription: { is_muted: true, email_notifications: true, wildcard_mentions_notify: null },
      }),
    ),
    null,
    'a muted channel',
  );
  t.equal(
    emailTrigger(
      facts({
        subscription: { is_muted: true, email_notifications: true, wildcard_mentions_notify: null },
        visibilityPolicy: VisibilityPolicy.UNMUTED,
      }),
    ),
    EmailTrigger.STREAM_EMAIL,
    'a topic unmuted in a muted channel',
  );
  t.equal(
    emailTrigger(
      facts({
        mentioned: true,
        settings: { enable_offline_email_notifications: false } as never,
        visibilityPolicy: VisibilityPolicy.FOLLOWED,
      }),
    ),
    EmailTrigger.FOLLOWED_TOPIC_EMAIL,
    'mentions off, the followed topic still mails',
  );
  t.end();
});

t.test('away: no message queue, or not active within the threshold', (t) => {
  const base = { presenceDisabled: false, now: 1000, idleAfterSeconds: 200 };
  t.ok(isIdle({ ...base, hasMessageQueue: false, lastActiveTime: 999 }), 'no queue');
  t.notOk(isIdle({ ...base, hasMessageQueue: true, lastActiveTime: 900 }), 'queue and active');
  t.ok(isIdle({ ...base, hasMessageQueue: true, lastActiveTime: 700 }), 'queue, not active');
  t.ok(isIdle({ ...base, hasMessageQueue: true, lastActiveTime: null }), 'queue, never active');
  t.notOk(
    isIdle({ ...base, presenceDisabled: true, hasMessageQueue: true, lastActiveTime: null }),
    'presence disabled: a queue is enough',
  );
  t.end();
});

t.test('plain content', (t) => {
  t.equal(
    plainContent('see [a.png](/user_uploads/2/x/a.png)\nand /user_uploads/2/y/b.txt', URL),
    `> see ${URL}/user_uploads/2/x/a.png\n> and ${URL}/user_uploads/2/y/b.txt`,
  );
  t.equal(
    plainContent('before\n```spoiler title\nhidden\n```\nafter', URL),
    '> before\n> ```spoiler title\n> (Open the app to see the spoiler content)\n> ```\n> after',
  );
  t.end();
});

t.test('rendered content fit for mail', (t) => {
  t.equal(
    mailHtml(
      '<p><a href="/#narrow/channel/1-a">#a</a> <a href="/user_uploads/1/a.pdf">a.pdf</a> <a href="https://x.org/">x</a></p>',
      URL,
    ),
    `<p><a href="${URL}/#narrow/channel/1-a">#a</a> <a href="${URL}/user_uploads/1/a.pdf">a.pdf</a> <a href="https://x.org/">x</a></p>`,
    'relative links made absolute, others kept',
  );
  t.equal(
    mailHtml(
      '<div class="message_inline_image"><a href="/user_uploads/1/a.png" title="a.png"><img src="/user_uploads/thumbnail/1/a.png/840x560.webp"></a></div>',
      URL,
    ),
    `<p><a href="${URL}/user_uploads/1/a.png" target="_blank">${URL}/user_uploads/1/a.png</a></p>`,
    'a message that is only an image becomes a link to it',
  );
  t.equal(
    mailHtml(
      '<p><a href="/user_uploads/1/a.png">a.png</a></p>\n<div class="message_inline_image"><a href="/user_uploads/1/a.png"><img src="/x.webp"></a></div>',
      URL,
    ),
    `<p><a href="${URL}/user_uploads/1/a.png">a.png</a></p>\n`,
    'image previews are dropped',
  );
  t.equal(
    mailHtml(
      '<p><img alt=":party:" class="emoji" src="/user_avatars/2/emoji/images/1.png" title="party"> <span class="emoji emoji-1f468-200d-1f4bb" title="technologist">:technologist:</span></p>',
      URL,
    ),
    `<p><img alt=":party:" src="${URL}/user_avatars/2/emoji/images/1.png" title="party" style="height: 20px;"> 👨‍💻</p>`,
    'custom emoji as small images, others as characters',
  );
  t.equal(
    mailHtml('<p>a &lt;b&gt; &amp; c</p>', URL),
    '<p>a &lt;b&gt; &amp; c</p>',
    'text stays escaped',
  );
  t.end();
});
