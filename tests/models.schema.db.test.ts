import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { ModelAttributeColumnOptions } from 'sequelize';
import { createSecretBox } from '../server/src/lib/crypto.ts';
import { createDatabase, type Db } from '../server/src/lib/db.ts';
import { createLogger } from '../server/src/lib/logger.ts';
import { migrate as runMigrations } from '../server/src/lib/migrator.ts';
import { MIGRATIONS } from '../server/src/migrations/index.ts';
import { MODELS } from '../server/src/models.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';

// Each table's model (server/src/models.ts, declared in the table's owner) says what the
// migrations made: the same tables both ways, and per table the same columns, with the same
// type, nullability and primary key. A migration without its model change, or a model edited
// on its own, fails here.

const test = suite('models: every table has one model, and it matches the migrated schema');
const logger = createLogger('silent');

/** pg-boss keeps its own schema and tables; they are its, not ours. */
const FOREIGN_SCHEMAS = ['pg_catalog', 'information_schema', 'pgboss'];

/** What information_schema calls (udt_name) the column a Sequelize type declares on PostgreSQL. */
const UDT_OF: Record<string, string> = {
  INTEGER: 'int4',
  BIGINT: 'int8',
  SMALLINT: 'int2',
  TEXT: 'text',
  BOOLEAN: 'bool',
  BLOB: 'bytea',
  DATE: 'timestamptz',
  UUID: 'uuid',
  JSONB: 'jsonb',
};

type SequelizeType = { key: string; type?: SequelizeType };

function udtOf(type: SequelizeType): string {
  if (type.key === 'ARRAY' && type.type) return `_${udtOf(type.type)}`;
  return UDT_OF[type.key] ?? `unmapped Sequelize type ${type.key}`;
}

/** One line per column, `table.column type null|not null [key]`, sorted: a drift shows as a diff. */
type Shape = Map<string, string[]>;

function modelShapes(db: Db): Shape {
  const shapes: Shape = new Map();
  for (const table of MODELS) {
    const attributes = Object.entries(db.define(table).getAttributes()) as Array<[string, ModelAttributeColumnOptions & { field?: string }]>;
    const lines = attributes.map(([name, attribute]) => {
      const nullable = attribute.allowNull !== false && !attribute.primaryKey;
      return `${table.tableName}.${attribute.field ?? name} ${udtOf(attribute.type as unknown as SequelizeType)} ${nullable ? 'null' : 'not null'}${attribute.primaryKey ? ' key' : ''}`;
    });
    shapes.set(table.tableName, lines.sort());
  }
  return shapes;
}

async function schemaShapes(db: Db): Promise<Shape> {
  const columns = await db.query<{ table_name: string; column_name: string; udt_name: string; is_nullable: string; key: boolean }>(
    `SELECT c.table_name, c.column_name, c.udt_name, c.is_nullable,
            EXISTS (SELECT 1 FROM information_schema.table_constraints t
                    JOIN information_schema.key_column_usage k ON k.constraint_schema = t.constraint_schema AND k.constraint_name = t.constraint_name
                    WHERE t.constraint_type = 'PRIMARY KEY' AND t.table_schema = c.table_schema AND t.table_name = c.table_name AND k.column_name = c.column_name) AS key
     FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE t.table_type = 'BASE TABLE' AND c.table_schema <> ALL($1)`,
    [FOREIGN_SCHEMAS],
  );
  const shapes: Shape = new Map();
  for (const column of columns) {
    const line = `${column.table_name}.${column.column_name} ${column.udt_name} ${column.is_nullable === 'YES' ? 'null' : 'not null'}${column.key ? ' key' : ''}`;
    shapes.set(column.table_name, [...(shapes.get(column.table_name) ?? []), line]);
  }
  for (const lines of shapes.values()) lines.sort();
  return shapes;
}

let database: TestDatabase;
let db: Db;

test.before(async () => {
  database = await createTestDatabase();
  db = await createDatabase({ databaseUrl: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR, logger });
  const dataKey = randomBytes(32);
  const context = { secretBox: createSecretBox([dataKey]), dataKeys: [dataKey] };
  await runMigrations(db, logger, MIGRATIONS, (tx) => ({ sql: (text: string, values?: unknown[]) => tx.query(text, values), ...context }));
});

test.after(async () => {
  await db?.close();
  await database?.drop();
});

test('each table is declared by exactly one model', () => {
  const names = MODELS.map((table) => table.tableName);
  assert.equal(names.filter((name, index) => names.indexOf(name) !== index), [], 'no table is declared twice');
});

test('the migrated tables and the models are the same set', async () => {
  const tables = [...(await schemaShapes(db)).keys()].sort();
  const models = MODELS.map((table) => table.tableName).sort();
  assert.equal(tables.filter((name) => !models.includes(name)), [], 'every migrated table has a model');
  assert.equal(models.filter((name) => !tables.includes(name)), [], 'every model has a migrated table');
});

test("each model's columns, types, nullability and primary key are the migrated table's", async () => {
  const schema = await schemaShapes(db);
  const models = modelShapes(db);
  for (const [table, lines] of models) assert.equal(lines, schema.get(table) ?? [], `model of ${table}`);
});

test.run();
