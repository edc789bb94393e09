/**
 * Server limits and client-behaviour constants the API reports (register) and enforces. Values are
 * the reference server's defaults; the areas that validate input (messages, channels, typing)
 * import them from here so what register announces is what the server checks.
 */

/** Longest message content, in Unicode code points. */
export const MAX_MESSAGE_LENGTH = 10000;
/**
 * Longest rendered HTML of a message, in Unicode code points: the reference refuses more (its
 * MAX_MESSAGE_LENGTH × 100), so that nothing downstream handles a runaway rendering (a 9,805
 * character TeX formula renders to 1.4 million).
 */
export const MAX_RENDERED_LENGTH = MAX_MESSAGE_LENGTH * 100;
/** Longest topic name, in Unicode code points. */
export const MAX_TOPIC_LENGTH = 60;
/** Longest channel name and description, in Unicode code points. */
export const MAX_CHANNEL_NAME_LENGTH = 60;
export const MAX_CHANNEL_DESCRIPTION_LENGTH = 1024;
/** Longest channel folder name, in Unicode code points. */
export const MAX_CHANNEL_FOLDER_NAME_LENGTH = 60;

/**
 * Most terms a message search narrow may have (GET /messages, POST /messages/flags/narrow,
 * GET /messages/matches_narrow): each adds to the SQL expression, and SQLite refuses trees deeper
 * than 1,000. Real clients send a handful.
 */
export const MAX_NARROW_TERMS = 100;
/**
 * Most distinct words and "quoted phrases" the `search` terms of a narrow may have together (a
 * repeated one counts once): SQLite's FTS5 takes time quadratic in a query's terms (20,000 took
 * seconds, holding the database for every other request). A phrase's own words are not counted:
 * it is one term. Real searches have a few words.
 */
export const MAX_SEARCH_TERMS = 200;

/**
 * Most parameters a request may carry in its query string, and as many again in its body (form
 * fields, multipart fields, a JSON object's keys), a repeated name counting each time: the
 * reference's (Django's DATA_UPLOAD_MAX_NUMBER_FIELDS). An endpoint takes a few dozen at most;
 * 200,000 in a 2 MB form took the event loop seconds to gather (and were all listed back in
 * `ignored_parameters_unsupported`).
 */
export const MAX_PARAMETERS = 1000;

/** The HTTP timeout clients should use for GET /events; heartbeats come well within it. */
export const EVENT_QUEUE_LONGPOLL_TIMEOUT_SECONDS = 90;

/** Typing protocol (POST /typing): see the spec's "Client protocol". */
export const TYPING_STARTED_EXPIRY_PERIOD_MILLISECONDS = 45000;
export const TYPING_STOPPED_WAIT_PERIOD_MILLISECONDS = 12000;
export const TYPING_STARTED_WAIT_PERIOD_MILLISECONDS = 30000;
/** Channels with more subscribers than this get no typing notifications. */
export const MAX_STREAM_SIZE_FOR_TYPING_NOTIFICATIONS = 100;

/** Presence protocol parameters clients read from register. */
export const PRESENCE_PING_INTERVAL_SECONDS = 60;
export const PRESENCE_OFFLINE_THRESHOLD_SECONDS = 200;
