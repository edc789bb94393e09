/**
 * A channel's own notification settings (its desktop, sound, push, e-mail and @all values; null
 * for "as my default") in the app's decisions: the desktop notification and the sound.
 */
import t from 'tap';
import type { Subscription, UserSettings } from '../../src/client/types.js';
import type { StoredMessage } from '../../web/state/chat.js';
import {
  channelNotify,
  shouldNotify,
  shouldSound,
  type NotifyContext,
} from '../../web/state/notify.js';

const settings: UserSettings = {
  twenty_four_hour_time: false,
  color_scheme: 1,
  enable_desktop_notifications: true,
  enable_sounds: true,
  enable_stream_desktop_notifications: false,
  enable_stream_audible_notifications: false,
  wildcard_mentions_notify: true,
};

const sub = (o: Partial<Subscription> = {}): Subscription => ({
  stream_id: 10,
  name: 'general',
  description: '',
  color: '#76ce90',
  invite_only: false,
  is_muted: false,
  pin_to_top: false,
  desktop_notifications: null,
  audible_notifications: null,
  wildcard_mentions_notify: null,
  ...o,
});

const msg = (flags: string[] = []): StoredMessage =>
  ({
    id: 5,
    sender_id: 2,
    sender_full_name: 'Hamlet',
    type: 'stream',
    stream_id: 10,
    subject: 'lunch',
    content: '<p>hi</p>',
    flags,
  }) as unknown as StoredMessage;

const ctx = (s: Subscription, o: Partial<NotifyContext> = {}): NotifyContext => ({
  selfId: 1,
  settings,
  sub: s,
  mutedTopic: false,
  followedTopic: false,
  seeing: false,
  ...o,
});

t.test("channelNotify: the channel's own value, else the user's", (t) => {
  t.same(channelNotify(sub(), settings, 'desktop_notifications'), {
    on: false,
    own: false,
    byDefault: false,
  });
  t.same(channelNotify(sub({ desktop_notifications: true }), settings, 'desktop_notifications'), {
    on: true,
    own: true,
    byDefault: false,
  });
  t.same(
    channelNotify(sub({ desktop_notifications: false }), settings, 'desktop_notifications'),
    { on: false, own: false, byDefault: false },
    'a value equal to the default is not told apart from it (the reference resets so)',
  );
  t.same(
    channelNotify(
      sub(),
      { ...settings, enable_stream_desktop_notifications: true },
      'desktop_notifications',
    ),
    { on: true, own: false, byDefault: true },
    'follows the user setting while the channel has none',
  );
  t.same(
    channelNotify(
      sub(),
      {
        twenty_four_hour_time: false,
        color_scheme: 1,
        enable_desktop_notifications: true,
        enable_stream_desktop_notifications: false,
      },
      'wildcard_mentions_notify',
    ).on,
    true,
    '@all mentions notify when the user setting is absent (the reference default)',
  );
  t.same(channelNotify(undefined, settings, 'email_notifications').on, false, 'no subscription');
  t.end();
});

t.test('desktop notifications: the channel overrides the user setting, both ways', (t) => {
  t.equal(shouldNotify(msg(), ctx(sub())), false, 'user default off, channel null: none');
  t.equal(shouldNotify(msg(), ctx(sub({ desktop_notifications: true }))), true, 'channel on');
  const on = { ...settings, enable_stream_desktop_notifications: true };
  t.equal(shouldNotify(msg(), ctx(sub(), { settings: on })), true, 'user default on');
  t.equal(
    shouldNotify(msg(), ctx(sub({ desktop_notifications: false }), { settings: on })),
    false,
    'channel off although the default is on',
  );
  t.equal(
    shouldNotify(msg(), ctx(sub({ desktop_notifications: true }), { mutedTopic: true })),
    false,
    'never in a muted topic',
  );
  const all = msg(['stream_wildcard_mentioned']);
  t.equal(shouldNotify(all, ctx(sub())), true, '@all by the user setting');
  t.equal(
    shouldNotify(all, ctx(sub({ wildcard_mentions_notify: false }))),
    false,
    '@all turned off in the channel',
  );
  t.equal(
    shouldNotify(
      all,
      ctx(sub({ wildcard_mentions_notify: true }), {
        settings: { ...settings, wildcard_mentions_notify: false },
      }),
    ),
    true,
    '@all turned on in the channel only',
  );
  t.end();
});

t.test('the sound: the channel overrides the user setting, both ways', (t) => {
  t.equal(shouldSound(msg(), ctx(sub())), false, 'user default off, channel null: none');
  t.equal(shouldSound(msg(), ctx(sub({ audible_notifications: true }))), true, 'channel on');
  t.equal(
    shouldSound(msg(), ctx(sub({ desktop_notifications: true }))),
    false,
    "the desktop override is not the sound's",
  );
  const on = { ...settings, enable_stream_audible_notifications: true };
  t.equal(shouldSound(msg(), ctx(sub(), { settings: on })), true, 'user default on');
  t.equal(
    shouldSound(msg(), ctx(sub({ audible_notifications: false }), { settings: on })),
    false,
    'channel off although the default is on',
  );
  t.equal(shouldSound(msg(['mentioned']), ctx(sub())), true, 'a mention, by enable_sounds');
  t.equal(
    shouldSound(
      msg(['mentioned']),
      ctx(sub(), { settings: { ...settings, enable_sounds: false } }),
    ),
    false,
    'sounds turned off',
  );
  t.equal(
    shouldSound(msg(['stream_wildcard_mentioned']), ctx(sub({ wildcard_mentions_notify: false }))),
    false,
    '@all turned off in the channel',
  );
  t.equal(
    shouldSound(msg(), ctx(sub({ audible_notifications: true }), { seeing: true })),
    false,
    'not for what one is looking at',
  );
  t.end();
});

t.test('an alert word notifies and sounds as a mention does, outside muted topics', (t) => {
  const alerted = msg(['has_alert_word']);
  t.equal(shouldNotify(alerted, ctx(sub())), true, 'with the channel’s notifications off');
  t.equal(shouldSound(alerted, ctx(sub())), true, 'and its sounds off');
  t.equal(
    shouldNotify(
      alerted,
      ctx(sub(), { settings: { ...settings, enable_desktop_notifications: false } }),
    ),
    false,
    'not when the user turned notifications of mentions off',
  );
  t.equal(shouldNotify(alerted, ctx(sub(), { mutedTopic: true })), false, 'not in a muted topic');
  t.equal(shouldSound(alerted, ctx(sub(), { mutedTopic: true })), false);
  t.end();
});
