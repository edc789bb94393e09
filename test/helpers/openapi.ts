/**
 * Validating responses against the API's public OpenAPI description
 * (../shared/reference/openapi.yaml, read in place, never copied into this repository).
 *
 * The description is OpenAPI 3.0: `nullable: true` becomes a JSON-Schema null type, `$ref`s are
 * resolved inline, and `additionalProperties: false` is honoured, so an extra or misspelled field
 * fails. Where spec/API.md deliberately differs from the description, the caller names the
 * difference (`allowExtra`). When the file is not reachable (a clone without ../shared), schema
 * checks are reported as skipped; every behavioural assertion still runs.
 */
import AjvModule, { type ValidateFunction } from 'ajv';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import YAML from 'yaml';
import { WIRE_NAME_EXTRAS } from './spec-extras.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const here = path.dirname(fileURLToPath(import.meta.url));
const CANDIDATES = [
  process.env.CONFAB_OPENAPI ?? '',
  path.resolve(here, '../../../../shared/reference/openapi.yaml'), // dist/test/helpers → repo/..
  path.resolve(here, '../../../shared/reference/openapi.yaml'),
  path.resolve(process.cwd(), '../shared/reference/openapi.yaml'),
].filter((p) => p !== '');

let spec: Obj | null | undefined;

function loadSpec(): Obj | null {
  if (spec !== undefined) return spec;
  const file = CANDIDATES.find((p) => fs.existsSync(p));
  spec = file ? (YAML.parse(fs.readFileSync(file, 'utf8'), { maxAliasCount: -1 }) as Obj) : null;
  return spec;
}

function pointer(root: Obj, ref: string): Json {
  if (!ref.startsWith('#/')) throw new Error(`external $ref not supported: ${ref}`);
  let cur: Json = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur))
      throw new Error(`bad $ref ${ref}`);
    cur = cur[key] ?? null;
  }
  return cur;
}

const DROP = new Set([
  'description',
  'example',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'discriminator',
]);

/** Resolves $refs and turns OpenAPI 3.0 schema dialect into JSON Schema for ajv. */
function toJsonSchema(root: Obj, node: Json, depth = 0): Json {
  if (depth > 60) throw new Error('schema too deep (recursive $ref?)');
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(root, n, depth + 1));
  if (node === null || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') return toJsonSchema(root, pointer(root, node.$ref), depth + 1);
  const out: Obj = {};
  for (const [k, v] of Object.entries(node)) {
    if (DROP.has(k) || k.startsWith('x-')) continue;
    if (k === 'nullable') continue;
    if (k === 'properties' && v && typeof v === 'object' && !Array.isArray(v)) {
      const props: Obj = {};
      for (const [pk, pv] of Object.entries(v)) props[pk] = toJsonSchema(root, pv, depth + 1);
      out[k] = props;
      continue;
    }
    out[k] = toJsonSchema(root, v, depth + 1);
  }
  if (node.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    if (out.type === undefined && out.enum === undefined) return out; // already permissive
  }
  return out;
}

// ajv is CommonJS with a default export; under NodeNext the constructor sits on `.default`.
const Ajv = AjvModule.default;
const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
const compiled = new Map<string, ValidateFunction | null>();

function responseValidator(
  apiPath: string,
  method: string,
  status: string,
): ValidateFunction | null {
  const key = `${method} ${apiPath} ${status}`;
  if (compiled.has(key)) return compiled.get(key)!;
  const root = loadSpec();
  if (!root) return null;
  const op = pointer(
    root,
    `#/paths/${apiPath.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}`,
  ) as Obj | null;
  if (!op) throw new Error(`the description has no ${method.toUpperCase()} ${apiPath}`);
  let response = (op.responses as Obj | undefined)?.[status] ?? null;
  if (
    response &&
    typeof response === 'object' &&
    !Array.isArray(response) &&
    typeof response.$ref === 'string'
  ) {
    response = pointer(root, response.$ref);
  }
  const schema = (
    ((response as Obj | null)?.content as Obj | undefined)?.['application/json'] as Obj | undefined
  )?.schema;
  if (!schema) throw new Error(`no JSON schema for ${key}`);
  const fn = ajv.compile(toJsonSchema(root, schema) as object);
  compiled.set(key, fn);
  return fn;
}

/**
 * Asserts that `body` matches the description of `method apiPath` → `status`. `allowExtra` lists
 * fields the spec adds beyond the description (removed before validation, wherever they occur);
 * the reference-spelled version fields (WIRE_NAME_EXTRAS) are always removed.
 */
export function assertMatchesOpenApi(
  t: Test,
  apiPath: string,
  method: 'get' | 'post' | 'patch' | 'delete' | 'put',
  body: unknown,
  opts: { status?: string; allowExtra?: readonly string[] } = {},
): void {
  const fn = responseValidator(apiPath, method, opts.status ?? '200');
  if (!fn) {
    t.comment(`openapi.yaml not found; schema check of ${method.toUpperCase()} ${apiPath} skipped`);
    return;
  }
  // The reference's spelling of the version fields is always served beside the spec's.
  const value = stripFields(body, new Set([...WIRE_NAME_EXTRAS, ...(opts.allowExtra ?? [])]));
  const ok = fn(value);
  t.ok(ok, `${method.toUpperCase()} ${apiPath} matches the OpenAPI description`, {
    errors: ok ? undefined : (fn.errors ?? []).slice(0, 5),
  });
}

function stripFields(v: unknown, drop: Set<string>): unknown {
  if (Array.isArray(v)) return v.map((x) => stripFields(x, drop));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!drop.has(k)) out[k] = stripFields(x, drop);
  return out;
}

export type ApiParameter = { name: string; in: 'query' | 'path' | 'body'; schema: Json };
export type ApiOperation = { method: string; path: string; parameters: ApiParameter[] };

/**
 * Every operation of the description (its paths are under /api/v1), with its parameters: query
 * and path parameters and the request body's form fields, `$ref`s resolved. null without the
 * file.
 */
export function apiOperations(): ApiOperation[] | null {
  const root = loadSpec();
  if (!root) return null;
  const out: ApiOperation[] = [];
  const resolve = (node: Json): Json =>
    node !== null &&
    typeof node === 'object' &&
    !Array.isArray(node) &&
    typeof node.$ref === 'string'
      ? resolve(pointer(root, node.$ref))
      : node;
  for (const [p, item] of Object.entries((root.paths as Obj | undefined) ?? {})) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) continue;
    for (const method of ['get', 'post', 'patch', 'put', 'delete']) {
      const op = resolve(item[method] ?? null) as Obj | null;
      if (!op) continue;
      const parameters: ApiParameter[] = [];
      for (const raw of [
        ...((item.parameters as Json[]) ?? []),
        ...((op.parameters as Json[]) ?? []),
      ]) {
        const prm = resolve(raw) as Obj | null;
        if (!prm || (prm.in !== 'query' && prm.in !== 'path')) continue;
        const content = prm.content as Obj | undefined;
        const schema =
          prm.schema ?? (content?.['application/json'] as Obj | undefined)?.schema ?? null;
        parameters.push({
          name: typeof prm.name === 'string' ? prm.name : '',
          in: prm.in,
          schema: toJsonSchema(root, schema),
        });
      }
      const body = resolve((op.requestBody as Json) ?? null) as Obj | null;
      const form = ((body?.content as Obj | undefined)?.['application/x-www-form-urlencoded'] ??
        (body?.content as Obj | undefined)?.['multipart/form-data']) as Obj | undefined;
      const props = (resolve(form?.schema ?? null) as Obj | null)?.properties as Obj | undefined;
      for (const [name, schema] of Object.entries(props ?? {})) {
        const s = resolve(schema) as Obj | null;
        // A form field's JSON schema may sit under content/application/json (encoded JSON).
        parameters.push({ name, in: 'body', schema: toJsonSchema(root, s) });
      }
      out.push({ method: method.toUpperCase(), path: p, parameters });
    }
  }
  return out;
}
