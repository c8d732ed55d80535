import type { Knex } from 'knex';

/** One column as information_schema describes it. */
export interface ColumnFacts {
  table: string;
  column: string;
  dataType: string;
  columnType: string;
  nullable: boolean;
  /** The default as the server shows it (null: none); an auto-increment or generated column needs none. */
  hasDefault: boolean;
  maxLength: number | null;
}

export type SchemaSnapshot = Map<string, ColumnFacts>;

/** Every base-table column of the connection's database, keyed `table.column`. */
export async function snapshotColumns(knex: Knex): Promise<SchemaSnapshot> {
  const [rows] = (await knex.raw(
    `SELECT c.TABLE_NAME AS t, c.COLUMN_NAME AS c, c.DATA_TYPE AS dt, c.COLUMN_TYPE AS ct, c.IS_NULLABLE AS n,
            c.COLUMN_DEFAULT AS d, c.EXTRA AS x, c.CHARACTER_MAXIMUM_LENGTH AS len
       FROM information_schema.COLUMNS c
       JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME
      WHERE c.TABLE_SCHEMA = DATABASE() AND t.TABLE_TYPE = 'BASE TABLE'`,
  )) as unknown as [Array<{ t: string; c: string; dt: string; ct: string; n: string; d: string | null; x: string; len: number | string | null }>];
  const snapshot: SchemaSnapshot = new Map();
  for (const row of rows) {
    snapshot.set(`${row.t}.${row.c}`, {
      table: row.t,
      column: row.c,
      dataType: row.dt.toLowerCase(),
      columnType: row.ct.toLowerCase(),
      nullable: row.n === 'YES',
      // MariaDB shows "no default" as NULL and a default of NULL as the string 'NULL'.
      hasDefault: row.d !== null || /auto_increment|generated/i.test(row.x),
      maxLength: row.len === null ? null : Number(row.len),
    });
  }
  return snapshot;
}

/** Types a column may widen to without breaking a reader or writer of the older type. */
const WIDENINGS: Record<string, readonly string[]> = {
  tinyint: ['smallint', 'mediumint', 'int', 'bigint'],
  smallint: ['mediumint', 'int', 'bigint'],
  mediumint: ['int', 'bigint'],
  int: ['bigint'],
  char: ['varchar'],
  varchar: ['text', 'mediumtext', 'longtext'],
  text: ['mediumtext', 'longtext'],
  mediumtext: ['longtext'],
  blob: ['mediumblob', 'longblob'],
  mediumblob: ['longblob'],
};

/**
 * What the schema after the migrations since the previous release breaks for that release's API and worker
 * (docs/contribute/decisions/0052-expand-then-contract-migrations.md): a table or column it used is gone or renamed
 * (a rename shows as gone), a column narrowed or changed type, a column it leaves out of its inserts became NOT NULL
 * without a default, or a column it does not know was added NOT NULL without a default to a table it writes.
 * Empty when the migrations only expand.
 */
export function expandOnlyViolations(before: SchemaSnapshot, after: SchemaSnapshot): string[] {
  const problems: string[] = [];
  const oldTables = new Set([...before.values()].map((column) => column.table));
  for (const [key, old] of before) {
    const now = after.get(key);
    if (!now) {
      problems.push(
        `${key}: ${oldTables.has(old.table) && ![...after.values()].some((c) => c.table === old.table) ? 'table dropped or renamed' : 'column dropped or renamed'}`,
      );
      continue;
    }
    if (now.dataType !== old.dataType && !WIDENINGS[old.dataType]?.includes(now.dataType)) {
      problems.push(`${key}: type changed from ${old.columnType} to ${now.columnType}`);
    } else if (old.maxLength !== null && now.maxLength !== null && now.maxLength < old.maxLength) {
      problems.push(`${key}: narrowed from ${old.columnType} to ${now.columnType}`);
    }
    if (old.nullable && !now.nullable && !now.hasDefault) problems.push(`${key}: made NOT NULL without a default`);
  }
  for (const [key, now] of after) {
    if (before.has(key) || !oldTables.has(now.table)) continue;
    if (!now.nullable && !now.hasDefault) problems.push(`${key}: added NOT NULL without a default to a table the previous release writes`);
  }
  return problems.sort();
}
