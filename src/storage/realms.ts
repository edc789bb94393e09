/** SQL for the `realms` table. */
import type { DB } from './db.js';
import type { IdSource } from './ids.js';

export type RealmRow = {
  id: number;
  string_id: string;
  name: string;
  description: string;
  date_created: number;
  deactivated: number;
  settings: string;
};

export function realmStatements(db: DB, ids: IdSource) {
  const insert = db.prepare<[number | null, string, string, string, number, string], void>(
    'INSERT INTO realms (id, string_id, name, description, date_created, settings) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const byId = db.prepare<[number], RealmRow>('SELECT * FROM realms WHERE id = ?');
  const byStringId = db.prepare<[string], RealmRow>('SELECT * FROM realms WHERE string_id = ?');
  const all = db.prepare<[], RealmRow>('SELECT * FROM realms ORDER BY id');
  const updateSettings = db.prepare<[string, number], void>(
    'UPDATE realms SET settings = ? WHERE id = ?',
  );
  const updateNameDescription = db.prepare<[string, string, number], void>(
    'UPDATE realms SET name = ?, description = ? WHERE id = ?',
  );
  const setDeactivated = db.prepare<[number, number], void>(
    'UPDATE realms SET deactivated = ? WHERE id = ?',
  );

  return {
    insert(r: {
      string_id: string;
      name: string;
      description: string;
      date_created: number;
      settings: string;
    }): number {
      return Number(
        insert.run(
          ids.nextId('realms'),
          r.string_id,
          r.name,
          r.description,
          r.date_created,
          r.settings,
        ).lastInsertRowid,
      );
    },
    byId: (id: number): RealmRow | undefined => byId.get(id),
    byStringId: (stringId: string): RealmRow | undefined => byStringId.get(stringId),
    all: (): RealmRow[] => all.all(),
    updateSettings: (id: number, settingsJson: string): void =>
      void updateSettings.run(settingsJson, id),
    updateNameDescription: (id: number, name: string, description: string): void =>
      void updateNameDescription.run(name, description, id),
    setDeactivated: (id: number, deactivated: boolean): void =>
      void setDeactivated.run(deactivated ? 1 : 0, id),
  };
}
export type RealmStatements = ReturnType<typeof realmStatements>;
