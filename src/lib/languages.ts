/**
 * The interface languages this server accepts for a user's or a realm's `default_language`: the
 * codes the reference ships translation data for, each with the name it shows (the reference's
 * get_language_name, used in the `language_name` of `user_settings` events). A code outside this
 * list is refused ("Invalid default_language" / "Invalid language '<code>'").
 */

export const LANGUAGES: Readonly<Record<string, string>> = {
  ar: 'العربيّة',
  be: 'Беларуская',
  bg: 'Български',
  bn: 'বাংলা',
  ca: 'Català',
  cs: 'Čeština',
  cy: 'Cymraeg',
  da: 'Dansk',
  de: 'Deutsch',
  el: 'Ελληνικά',
  en: 'English',
  en_GB: 'British English',
  eo: 'Esperanto',
  es: 'Español',
  fa: 'فارسی',
  fi: 'Suomi',
  fr: 'Français',
  gl: 'Galego',
  gu: 'ગુજરાતી',
  hi: 'हिंदी',
  hu: 'Magyar',
  id: 'Bahasa Indonesia',
  it: 'Italiano',
  ja: '日本語',
  ko: '한국어',
  lt: 'Lietuvių',
  lv: 'Latviešu',
  ml: 'മലയാളം',
  mn: 'Монгол',
  nl: 'Nederlands',
  no: 'Norsk',
  pa: 'ਪੰਜਾਬੀ',
  pl: 'Polski',
  pt: 'Português',
  pt_BR: 'Português Brasileiro',
  pt_PT: 'Português Europeu',
  ro: 'Română',
  ru: 'Русский',
  si: 'සිංහල',
  sk: 'Slovenčina',
  sr: 'Српски',
  sv: 'Svenska',
  ta: 'தமிழ்',
  te: 'తెలుగు',
  tl: 'Tagalog',
  tr: 'Türkçe',
  uk: 'Українська',
  uz: 'O‘zbekcha',
  vi: 'Tiếng Việt',
  'zh-hans': '简体中文',
  'zh-hant': '繁體中文',
};

export function isAvailableLanguage(code: string): boolean {
  return Object.hasOwn(LANGUAGES, code);
}

/** The display name of an available language code (the code itself for an unknown one). */
export function languageName(code: string): string {
  return LANGUAGES[code] ?? code;
}
