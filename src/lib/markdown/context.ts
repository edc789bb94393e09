/**
 * What the renderer needs to know about a realm (RenderContext: plain data, so it can be sent to
 * a worker and cached there by `version`), and what it reports back (RenderResult: the HTML and
 * the facts the message layer turns into flags and columns).
 */

export type RenderUser = { id: number; full_name: string; is_active: boolean };
/** A named user group (system groups included, as the reference resolves them). */
export type RenderGroup = { id: number; name: string; deactivated: boolean };
export type RenderChannel = { id: number; name: string };
export type RenderLinkifier = { id: number; pattern: string; url_template: string };
/** An active custom emoji: `:name:` renders as an image from `source_url`. */
export type RenderRealmEmoji = { name: string; source_url: string };
/** A user's alert word (matched case-insensitively on word boundaries). */
export type RenderAlertWord = { user_id: number; word: string };

/** An uploaded image as the renderer previews it (the reference's MarkdownImageMetadata). */
export type UploadPreview = {
  original_width_px: number;
  original_height_px: number;
  content_type: string;
  /** The default thumbnail's URL once made (null: not yet; the markup is a loading placeholder). */
  thumbnail_url: string | null;
  animated: boolean;
  /** The transcoded full-size format (`4032x3024.webp`) of an image browsers cannot show. */
  transcoded_image: string | null;
};

export type RenderContext = {
  /** Identifies this data: equal versions mean equal contexts (workers cache by it). */
  version: string;
  /** `http://host[:port]` of the realm, to make links into the realm relative. */
  realm_url: string;
  users: readonly RenderUser[];
  groups: readonly RenderGroup[];
  channels: readonly RenderChannel[];
  linkifiers: readonly RenderLinkifier[];
  realm_emoji: readonly RenderRealmEmoji[];
  alert_words: readonly RenderAlertWord[];
  /**
   * The image proxy external images and videos are shown through (camo's URL scheme), or null:
   * shown from their own URL.
   */
  image_proxy?: { prefix: string; key: string } | null;
};

/** Per-message options (the sender's settings and access). */
export type RenderOptions = {
  /** The sender's `translate_emoticons` setting: `:)` → :smile:. */
  translate_emoticons?: boolean;
  /**
   * The channels the content may link to (`#**channel**`, `#**channel>topic**`, message links):
   * those the sender has content access to, as the reference links only those. Others render as
   * if they did not exist. Absent: every channel of the context (content with no acting user,
   * such as the realm description). Callers need only list the channels the content names
   * (possibleChannelNames).
   */
  linkable_channel_ids?: readonly number[];
  /** No inline image previews (descriptions, as the reference's `no_previews`). */
  no_previews?: boolean;
  /**
   * The uploaded images the content links to (`/user_uploads/<path_id>`) that have preview data,
   * by path id: only those are previewed, as the reference previews uploads.
   */
  upload_previews?: Readonly<Record<string, UploadPreview>>;
  /**
   * The first message of each linked topic the sender can see, by `<channel name>\n<topic>` as
   * the content spells them: topic links then carry `/with/<message id>`, as the reference's do.
   */
  topic_first_message?: Readonly<Record<string, number>>;
};

export type RenderResult = {
  rendered_content: string;
  /** Users mentioned non-silently (active users only). */
  mentions_user_ids: number[];
  /** Groups mentioned non-silently (not deactivated). The caller checks `can_mention_group`. */
  mentions_user_group_ids: number[];
  /** `@**all**`, `@**everyone**`, `@**channel**`, `@**stream**` (not silent). */
  mentions_stream_wildcard: boolean;
  /** `@**topic**` (not silent). */
  mentions_topic_wildcard: boolean;
  has_link: boolean;
  has_image: boolean;
  /** Whether the content links to this realm's uploads (the caller confirms who may claim them). */
  has_attachment: boolean;
  /** Path ids of `/user_uploads/<path_id>` links, in order of appearance, without duplicates. */
  potential_attachment_path_ids: string[];
  /** Users with an alert word in the content. */
  user_ids_with_alert_words: number[];
  /** A `/me` status message. */
  is_me_message: boolean;
};

export const EMPTY_CONTEXT: RenderContext = {
  version: 'empty',
  realm_url: '',
  users: [],
  groups: [],
  channels: [],
  linkifiers: [],
  realm_emoji: [],
  alert_words: [],
};
