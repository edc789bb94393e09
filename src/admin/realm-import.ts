/**
 * `manage import-realm`: a new realm from an export archive (./archive.ts), on this server or
 * another. Every row gets a new id (the ids of the archive may be taken here); every reference
 * between rows follows: foreign-key columns, the JSON settings that hold channel ids and group
 * settings, the user lists of direct conversations and drafts, and the ids inside message text
 * and HTML (mentions, channel and message links, upload and custom emoji URLs).
 *
 * The database part runs in one transaction on the server's connection (a large import holds the
 * server for its duration: import big realms with the server stopped). Files are put in place
 * first and removed again if the transaction fails.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { uploadedIconFileIn } from '../lib/realm-icons.js';
import { Role } from '../lib/roles.js';
import { htmlToText } from '../lib/search.js';
import { realmUrl } from '../lib/urls.js';
import { checkSubdomain, subdomainInUse } from '../mutations/realms.js';
import { REALM_TABLES, maxIds, rowInserter, type Row } from '../storage/realm-dump.js';
import { MIGRATIONS } from '../storage/migrations/index.js';
import { emojiFile, realmIconFile } from '../storage/upload-files.js';
import { ARCHIVE_FORMAT, type ExportManifest } from './archive.js';
import type { AdminRuntime } from './commands.js';
import { UsageError } from './errors.js';
import { IdMaps, newPathId } from './realm-import-ids.js';
import { transform, type RegeneratedKey, type Tables } from './realm-import-rows.js';

export type ImportSummary = {
  realm_id: number;
  string_id: string;
  url: string;
  imported_from: ExportManifest['realm'];
  counts: Record<string, number>;
  /** Whether users kept the archive's password hashes and API keys. */
  credentials: boolean;
  /** Users whose API key from the archive was already in use here (or malformed): a new one. */
  api_keys_regenerated: RegeneratedKey[];
  /** The realm's owners; one without a password sets it with `reset-password`. */
  owners: { user_id: number; email: string; has_password: boolean }[];
};

/** Reads and checks an unpacked archive: its manifest (format, schema) and its tables. */
function readArchive(dir: string): { manifest: ExportManifest; tables: Tables } {
  let manifest: ExportManifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(dir, 'export.json'), 'utf8')) as ExportManifest;
  } catch {
    throw new UsageError('not a Confab realm export (no readable export.json)');
  }
  if (manifest.format !== ARCHIVE_FORMAT || manifest.version !== 1)
    throw new UsageError('not a Confab realm export (unknown format)');
  if (manifest.schema_version > MIGRATIONS.length)
    throw new UsageError(
      `the archive comes from a newer Confab (schema ${manifest.schema_version}; this one knows ${MIGRATIONS.length}): upgrade first`,
    );
  const tables: Tables = {};
  for (const t of REALM_TABLES) {
    const file = path.join(dir, 'tables', `${t.table}.json`);
    tables[t.table] = fs.existsSync(file)
      ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Row[])
      : [];
  }
  if (tables.realms!.length !== 1) throw new UsageError('the archive holds no realm');
  return { manifest, tables };
}

/** Whether `full` is a regular file (an archive's symbolic link is not). */
function isRegularFile(full: string): boolean {
  try {
    return fs.lstatSync(full).isFile();
  } catch {
    return false;
  }
}

function placeFile(from: string, to: string, placed: string[]): void {
  if (!fs.existsSync(from)) return;
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(from, to, fs.constants.COPYFILE_EXCL);
  placed.push(to);
}

export async function importRealmFromFile(
  rt: AdminRuntime,
  file: string,
  opts: { subdomain: string; name?: string; credentials: boolean },
): Promise<ImportSummary> {
  const { store, config } = rt;
  checkSubdomain(opts.subdomain);
  if (store.realms.byStringId(opts.subdomain)) throw subdomainInUse();
  if (!fs.existsSync(file)) throw new UsageError(`no such file: ${file}`);
  const work = path.join(config.dataDir, 'tmp', `import-${crypto.randomBytes(8).toString('hex')}`);
  fs.mkdirSync(work, { recursive: true, mode: 0o700 });
  const placed: string[] = [];
  try {
    try {
      await tar.x({ file: path.resolve(file), cwd: work, strict: true });
    } catch (err) {
      throw new UsageError(`cannot read the archive: ${(err as Error).message}`);
    }
    const { manifest, tables } = readArchive(work);
    const oldRealm = Number(tables.realms![0]!.id);

    // The uploaded icon its settings name, if the archive carries it (realm_icon/<file>).
    const icon = uploadedIconFileIn(tables.realms![0]!.settings);
    const iconInArchive = icon === null ? null : path.join(work, 'realm_icon', icon);
    const iconCarried = iconInArchive !== null && isRegularFile(iconInArchive);

    const ids = new IdMaps();
    const credentials = opts.credentials && manifest.credentials === true;
    const summary = store.transaction(() => {
      const max = maxIds(store.db);
      for (const t of Object.keys(max)) ids.assign(t, tables[t] ?? [], max[t]!);
      const newRealm = ids.need('realms', oldRealm);
      const regenerated: RegeneratedKey[] = [];
      const rows = transform(
        rt,
        tables,
        ids,
        newRealm,
        opts.subdomain,
        opts.name,
        {
          keep: credentials,
          keyInUse: (key) => store.users.byApiKey(key) !== undefined,
          regenerated,
        },
        iconCarried,
      );

      // Files first (inside the transaction's try: a failure removes them again).
      for (const a of tables.attachments ?? []) {
        const oldPath = String(a.path_id);
        placeFile(
          path.join(work, 'uploads', ...oldPath.split('/')),
          path.join(
            config.dataDir,
            'uploads',
            ...newPathId(oldPath, oldRealm, newRealm).split('/'),
          ),
          placed,
        );
      }
      for (const e of tables.realm_emoji ?? []) {
        const name = path.basename(String(e.file_name));
        placeFile(
          path.join(work, 'emoji', name),
          emojiFile(config.dataDir, newRealm, name),
          placed,
        );
      }

      if (iconCarried) {
        placeFile(iconInArchive, realmIconFile(config.dataDir, newRealm, icon!), placed);
      }

      const insert = rowInserter(store.db);
      for (const t of REALM_TABLES) for (const r of rows[t.table] ?? []) insert.insert(t.table, r);
      for (const u of tables.users ?? []) {
        if (u.bot_owner_id !== null && u.bot_owner_id !== undefined) {
          const owner = ids.get('users', u.bot_owner_id);
          if (owner !== undefined) store.users.setBotOwner(ids.need('users', u.id), owner);
        }
      }
      for (const m of rows.messages ?? []) {
        insert.indexMessage(Number(m.id), String(m.topic), htmlToText(String(m.rendered_content)));
      }
      const counts: Record<string, number> = {};
      for (const [t, r] of Object.entries(rows)) counts[t] = r.length;
      const owners = (rows.users ?? [])
        .filter((u) => u.role === Role.OWNER && u.is_bot === 0 && u.is_active === 1)
        .map((u) => ({
          user_id: Number(u.id),
          email: String(u.delivery_email),
          has_password: typeof u.password_hash === 'string',
        }));
      return { newRealm, counts, owners, regenerated };
    });
    // Its rows went in behind the message store's back: nothing remembered may outlive them.
    store.messages.forgetReceivedMaxima();
    store.topics.forgetActivity();
    rt.realms.noteRealmCreated(summary.newRealm);
    return {
      realm_id: summary.newRealm,
      string_id: opts.subdomain,
      url: realmUrl(config, opts.subdomain),
      imported_from: manifest.realm,
      counts: summary.counts,
      credentials,
      api_keys_regenerated: summary.regenerated,
      owners: summary.owners,
    };
  } catch (err) {
    for (const p of placed) fs.rmSync(p, { force: true });
    throw err;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
