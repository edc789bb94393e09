/**
 * Checks of a code playground's values (the reference's check_pygments_language and
 * RealmPlayground's field and template validation), in the reference's order.
 */
import { JsonableError } from './errors.js';
import { parseUriTemplate, TemplateError, templateVariables } from './markdown/uri-template.js';

export const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;

const PYGMENTS_LANGUAGE = /^[ a-zA-Z\d_+\-./#]*$/;

/** The language as a parameter: only these characters (checked before anything else). */
export function checkPygmentsLanguage(language: string): void {
  if (!PYGMENTS_LANGUAGE.test(language))
    throw new JsonableError('Invalid characters in pygments language');
}

/** The stripped values of a new playground; throws the reference's message for a bad one. */
export function checkPlayground(p: {
  name: string;
  pygments_language: string;
  url_template: string;
}) {
  const name = p.name.trim();
  const language = p.pygments_language.trim();
  const template = p.url_template.trim();
  if (name === '' || language === '' || template === '')
    throw new JsonableError('This field cannot be blank.');
  if (language.length > MAX_PYGMENTS_LANGUAGE_LENGTH) {
    throw new JsonableError(
      `Ensure this value has at most ${MAX_PYGMENTS_LANGUAGE_LENGTH} characters (it has ${language.length}).`,
    );
  }
  let variables: string[];
  try {
    parseUriTemplate(template);
    variables = templateVariables(template);
  } catch (err) {
    if (err instanceof TemplateError) throw new JsonableError('Invalid URL template.');
    throw err;
  }
  if (variables.length !== 1 || variables[0] !== 'code')
    throw new JsonableError('"code" should be the only variable present in the URL template');
  return { name, pygments_language: language, url_template: template };
}
