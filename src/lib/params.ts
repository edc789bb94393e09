/**
 * Request parameters as the API encodes them, decoded with zod.
 *
 * Every parameter arrives as a string (query string, urlencoded or multipart field). Plain strings
 * are taken as they are; integers, booleans, lists and objects are JSON inside the field
 * (`to=[1,2]`, `include_anchor=false`, `user_id=12`), as the reference's `Json[...]` parameters.
 * Some parameters take either (`anchor=newest` or `anchor=123`): `jsonOrString`.
 *
 * Errors follow the reference's templates and report only the first problem:
 *   missing            → 400 REQUEST_VARIABLE_MISSING "Missing 'x' argument" (+ var_name)
 *   malformed JSON     → 400 INVALID_JSON "x is not valid JSON"
 *   wrong type / value → 400 BAD_REQUEST "x is not an integer", "Invalid x", "x is too long (limit: N characters)" …
 *   a NUL character    → 400 BAD_REQUEST "x must not contain null bytes" (below, "NUL characters")
 * Messages written for a schema use `{var}` for the parameter's name (`to[1]` for nested values).
 */
import { z } from 'zod';
import { JsonableError, ParamValidationError, RequestVariableMissingError } from './errors.js';
import { parseJson } from './json.js';
import { reactionTypeIn } from './wire-names.js';

export type RawParams = Record<string, string>;

const JSON_INVALID = '{var} is not valid JSON';

function parseJsonField(s: string, ctx: z.RefinementCtx): unknown {
  try {
    return parseJson(s);
  } catch {
    ctx.addIssue({ code: 'custom', message: JSON_INVALID, params: { jsonInvalid: true } });
    return z.NEVER;
  }
}

/** A JSON-encoded field whose decoded value must match `schema`. */
export function json<T extends z.ZodType>(schema: T) {
  return z.string().transform(parseJsonField).pipe(schema);
}

/** A field that is JSON when it parses as JSON, and the raw string otherwise. */
export function jsonOrString<T extends z.ZodType>(schema: T) {
  return z
    .string()
    .transform((s) => {
      try {
        return parseJson(s);
      } catch {
        return s;
      }
    })
    .pipe(schema);
}

export const intValue = () =>
  z.number({ error: '{var} is not an integer' }).int({ error: '{var} is not an integer' });
export const boolValue = () => z.boolean({ error: '{var} is not a boolean' });

/** A JSON integer parameter. */
export const int = () => json(intValue());
/** A JSON integer parameter that must be ≥ 0. */
export const nonNegativeInt = () => json(intValue().min(0, { error: '{var} is too small' }));
/** A JSON boolean parameter (`true` / `false`). */
export const bool = () => json(boolValue());
/** A JSON list of integers. */
export const intList = () => json(z.array(intValue(), { error: '{var} is not a list' }));
/** A JSON list of strings. */
export const stringList = () =>
  json(z.array(z.string({ error: '{var} is not a string' }), { error: '{var} is not a list' }));

/**
 * A plain string parameter. `min: 1` reports "x cannot be blank"; `max` reports the limit. Both
 * count Unicode code points, as the reference's `len` does: zod 4.6's string `.min`/`.max` count
 * code points, not UTF-16 units (a name of 60 emoji is 60 characters, 120 units).
 * test/unit/params.test.ts pins this, should a zod upgrade change it.
 */
export function str(opts: { min?: number; max?: number; trim?: boolean } = {}) {
  let s = z.string();
  if (opts.trim) s = s.trim();
  if (opts.min !== undefined) {
    s = s.min(opts.min, {
      error: opts.min === 1 ? '{var} cannot be blank' : '{var} is too short.',
    });
  }
  if (opts.max !== undefined) {
    s = s.max(opts.max, { error: `{var} is too long (limit: ${opts.max} characters)` });
  }
  return s;
}

/** A plain string parameter that must be one of `values` ("Invalid x" otherwise). */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: 'Invalid {var}' });
}

/** A reaction type in either spelling (`zulip_extra_emoji` too), as stored (wire-names.ts). */
export const reactionType = () => z.string().transform(reactionTypeIn);

/** A path parameter that must be a non-negative integer (the route does not match otherwise). */
export const pathInt = () =>
  z
    .string()
    .regex(/^[0-9]{1,15}$/, { error: '{var} is not an integer' })
    .transform(Number);

// ---- turning zod issues into API errors -----------------------------------------------------

type Issue = z.core.$ZodIssue;

export function varNameOf(path: readonly PropertyKey[]): string {
  const [head, ...rest] = path;
  return (
    String(head ?? '') +
    rest.map((p) => `[${JSON.stringify(typeof p === 'symbol' ? String(p) : p)}]`).join('')
  );
}

function templateFor(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      switch (issue.expected) {
        case 'number':
        case 'int':
        case 'bigint':
          return '{var} is not an integer';
        case 'boolean':
          return '{var} is not a boolean';
        case 'string':
          return '{var} is not a string';
        case 'array':
          return '{var} is not a list';
        case 'object':
        case 'record':
          return '{var} is not a dict';
        default:
          return 'Invalid {var}';
      }
    case 'too_big':
      if (issue.origin === 'string')
        return `{var} is too long (limit: ${String(issue.maximum)} characters)`;
      if (issue.origin === 'array')
        return `{var} is too long (limit: ${String(issue.maximum)} items)`;
      return '{var} is too large';
    case 'too_small':
      if (issue.origin === 'string')
        return issue.minimum === 1 ? '{var} cannot be blank' : '{var} is too short.';
      if (issue.origin === 'array') return '{var} is too short.';
      return '{var} is too small';
    case 'unrecognized_keys':
      return `Argument "${issue.keys[0] ?? ''}" at {var} is unexpected`;
    default:
      return 'Invalid {var}';
  }
}

/** The API error for the first issue of a failed parse. */
export function errorFromIssue(issue: Issue): JsonableError {
  const varName = varNameOf(issue.path);
  const template = issue.message.includes('{var}') ? issue.message : templateFor(issue);
  const msg = template.replaceAll('{var}', varName);
  const jsonInvalid =
    issue.code === 'custom' && (issue.params as { jsonInvalid?: boolean } | undefined)?.jsonInvalid;
  return new ParamValidationError(msg, jsonInvalid ? 'INVALID_JSON' : 'BAD_REQUEST');
}

// ---- NUL characters --------------------------------------------------------------------------

/**
 * No text a client sends may hold a NUL (U+0000), in a plain field or inside a JSON value (a
 * `\u0000` escape), object keys included: every decoded string is checked here, once, and a NUL
 * answered 400 "x must not contain null bytes" (`alert_words[1] must not contain null bytes`).
 * The reference's database (PostgreSQL) cannot store U+0000 in text; it refuses it with its own
 * words only for message content ("Message must not contain null bytes", lib/message.py
 * normalize_body), topics and channel names (check_stream_topic, check_stream_name: "Invalid
 * character in ..., at position N"), drafts' topics and full names, and answers anything else with
 * a 500. Those parameters are marked `ownNulRule` and keep their words; so are passwords, which
 * the reference takes with a NUL (they are only ever hashed).
 *
 * The cost: a sent field is walked only when its raw text holds a NUL or a `\u0000` escape (two
 * native scans of text already read), so a request without one does no more than that.
 */
const OWN_NUL_RULE = new WeakSet<z.ZodType>();

/**
 * Leaves NUL characters in what `schema` decodes to the endpoint (see "NUL characters" above).
 * Mark a field, a nested value of a JSON field, or a whole parameter object (a browser form whose
 * every field has its own rule).
 */
export function ownNulRule<T extends z.ZodType>(schema: T): T {
  OWN_NUL_RULE.add(schema);
  return schema;
}

type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  valueType?: z.ZodType;
};

const defOf = (s: z.ZodType): Def => s._zod.def;

/**
 * The schema that made a decoded value, through its wrappers (optional, default, a pipe's output):
 * `null` when one of them is marked `ownNulRule`, `undefined` when the value's shape is not known
 * from it (a transform's output, a union: every string in the value is checked).
 */
function madeBy(schema: z.ZodType | undefined): z.ZodType | null | undefined {
  let s = schema;
  while (s !== undefined) {
    if (OWN_NUL_RULE.has(s)) return null;
    const def = defOf(s);
    switch (def.type) {
      case 'optional':
      case 'nullable':
      case 'default':
      case 'prefault':
      case 'nonoptional':
      case 'readonly':
      case 'catch':
        s = def.innerType;
        break;
      case 'pipe':
        // A transform's output has no shape to follow; a mark on its input still counts.
        if (defOf(def.out!).type === 'transform') return madeBy(def.in) === null ? null : undefined;
        s = def.out;
        break;
      default:
        return s;
    }
  }
  return undefined;
}

/** Where the first NUL is in a decoded value (its path), or null. */
function firstNul(
  value: unknown,
  schema: z.ZodType | undefined,
  path: PropertyKey[],
): PropertyKey[] | null {
  const s = madeBy(schema);
  if (s === null) return null;
  if (typeof value === 'string') return value.includes('\0') ? path : null;
  if (typeof value !== 'object' || value === null) return null;
  const def = s === undefined ? undefined : defOf(s);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item =
        def?.type === 'array'
          ? def.element
          : def?.type === 'tuple'
            ? (def.items![i] ?? def.rest ?? undefined)
            : undefined;
      const at = firstNul(value[i], item, [...path, i]);
      if (at) return at;
    }
    return null;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return null; // not JSON's: a transform's
  for (const [key, v] of Object.entries(value)) {
    if (key.includes('\0')) return path;
    const field =
      def?.type === 'object'
        ? (def.shape![key] ?? def.catchall)
        : def?.type === 'record'
          ? def.valueType
          : undefined;
    const at = firstNul(v, field, [...path, key]);
    if (at) return at;
  }
  return null;
}

export type ParamSchema = z.ZodObject<Record<string, z.ZodType>>;

export type CompiledParams<S extends ParamSchema> = {
  schema: S;
  known: ReadonlySet<string>;
  required: readonly string[];
  aliases: Readonly<Record<string, string>>;
  /**
   * The schema takes no parameter and checks nothing else (a plain `z.object({})`): its value is
   * `{}` whatever is sent, every parameter sent being ignored; decoded without running it.
   */
  takesNone: boolean;
  /** The fields whose decoded text is checked for NUL characters (all but `ownNulRule` ones). */
  nulChecked: readonly string[];
  /** Their schemas, in the same order. */
  nulSchemas: readonly z.ZodType[];
};

/**
 * Prepares a schema once, at module load: which keys it knows, which are required (a key is
 * required unless `undefined` parses, i.e. it is optional or has a default), and its aliases
 * (alias → canonical name, e.g. `subject` → `topic`).
 */
export function compileParams<S extends ParamSchema>(
  schema: S,
  endpointAliases: Record<string, string> = {},
  pathParams: readonly string[] = [],
): CompiledParams<S> {
  const keys = Object.keys(schema.shape);
  const required = keys.filter((k) => !schema.shape[k]!.safeParse(undefined).success);
  const aliases = { ...endpointAliases };
  for (const [alias, canonical] of Object.entries(WIRE_NAME_ALIASES)) {
    if (canonical in schema.shape && !(alias in schema.shape)) aliases[alias] = canonical;
  }
  const def = schema._zod.def;
  const takesNone =
    keys.length === 0 &&
    Object.keys(aliases).length === 0 &&
    (def.checks ?? []).length === 0 &&
    def.catchall === undefined;
  // A path's segments name a resource, never text to store: a NUL there finds none, and the
  // endpoint answers as for any other name it does not know (a file's 404, "No such user").
  const nulChecked = OWN_NUL_RULE.has(schema)
    ? []
    : keys.filter((k) => !pathParams.includes(k) && madeBy(schema.shape[k]) !== null);
  return {
    schema,
    known: new Set([...keys, ...Object.keys(aliases)]),
    required,
    aliases,
    takesNone,
    nulChecked,
    nulSchemas: nulChecked.map((k) => schema.shape[k]!),
  };
}

/**
 * Parameters existing clients spell the reference's way, accepted wherever the spec's name is
 * (docs/api.md "Wire names"): alias → the spec's name.
 */
export const WIRE_NAME_ALIASES: Readonly<Record<string, string>> = {
  client_gravatar: 'client_extavatar',
};

/**
 * Decodes raw parameters. Returns the typed values and the names of parameters the endpoint does
 * not know (reported back as `ignored_parameters_unsupported`). Throws the API error otherwise.
 */
export function decodeParams<S extends ParamSchema>(
  compiled: CompiledParams<S>,
  raw: RawParams,
  ignoreUnknown: readonly string[] = [],
): { params: z.output<S>; ignored: string[] } {
  if (compiled.takesNone) {
    const ignored: string[] = [];
    for (const key in raw) if (!ignoreUnknown.includes(key)) ignored.push(key);
    return { params: {} as z.output<S>, ignored };
  }
  let input: RawParams = raw;
  /** canonical name → the alias the client used (errors name the parameter as sent). */
  let sentAs: Map<string, string> | null = null;
  for (const alias in compiled.aliases) {
    if (raw[alias] === undefined) continue;
    const canonical = compiled.aliases[alias]!;
    if (input === raw) input = { ...raw };
    if (input[canonical] === undefined) {
      input[canonical] = input[alias]!;
      (sentAs ??= new Map()).set(canonical, alias);
    }
    delete input[alias];
  }
  for (const key of compiled.required) {
    if (input[key] === undefined) throw new RequestVariableMissingError(key);
  }
  const result = compiled.schema.safeParse(input);
  if (!result.success) {
    const first = result.error.issues[0];
    if (!first) throw new JsonableError('Invalid parameters');
    const alias = sentAs?.get(String(first.path[0]));
    throw errorFromIssue(alias ? { ...first, path: [alias, ...first.path.slice(1)] } : first);
  }
  for (let i = 0; i < compiled.nulChecked.length; i++) {
    const key = compiled.nulChecked[i]!;
    const text = input[key];
    if (text === undefined || (!text.includes('\0') && !text.includes('\\u0000'))) continue;
    const at = firstNul((result.data as Record<string, unknown>)[key], compiled.nulSchemas[i], [
      key,
    ]);
    if (at === null) continue;
    const alias = sentAs?.get(key);
    const name = varNameOf(alias ? [alias, ...at.slice(1)] : at);
    throw new ParamValidationError(`${name} must not contain null bytes`);
  }
  const ignored: string[] = [];
  for (const key of Object.keys(raw)) {
    if (!compiled.known.has(key) && !ignoreUnknown.includes(key)) ignored.push(key);
  }
  return { params: result.data, ignored };
}

// ---- group-setting values ------------------------------------------------------------------

const intArray = () => z.array(intValue(), { error: '{var} is not a list' });

/** A group-setting value: a user group id, or `{direct_members, direct_subgroups}`. */
export const groupSettingValue = () =>
  z.union(
    [
      intValue(),
      z.object(
        { direct_members: intArray(), direct_subgroups: intArray() },
        { error: 'Invalid {var}' },
      ),
    ],
    { error: 'Invalid {var}' },
  );

/** A JSON group-setting value parameter. */
export const groupSetting = () => json(groupSettingValue());

/** A JSON `{new, old}` group-setting change (PATCH endpoints); `old` is the expected current value. */
export const groupSettingChange = () =>
  json(
    z.object(
      { new: groupSettingValue(), old: groupSettingValue().optional() },
      { error: '{var} is not a dict' },
    ),
  );
