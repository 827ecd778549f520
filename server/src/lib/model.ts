import type { DataType, Model, ModelAttributeColumnOptions, ModelAttributes, ModelStatic, Sequelize } from 'sequelize';

/**
 * A table as its owner declares it: Sequelize attributes (columns, types, nullability, key)
 * checked by the compiler against the row type declared beside them, one column per field.
 * The declaration holds no connection; each database defines it on its own Sequelize
 * (db.ts), and tests/models.schema.db.test.ts compares it with the migrated schema.
 * Statements stay SQL in the owner's repo: the model is for the shape, not for queries.
 */
export type TableModel<Row extends object = object> = {
  readonly tableName: string;
  readonly attributes: ModelAttributes<Model<Row>, Row>;
  define(sequelize: Sequelize): ModelStatic<Model<Row>>;
};

export function declareTable<Row extends object>(tableName: string, attributes: ModelAttributes<Model<Row>, Row>): TableModel<Row> {
  return {
    tableName,
    attributes,
    define: (sequelize) => sequelize.define<Model<Row>>(tableName, attributes, { tableName, timestamps: false, underscored: true, freezeTableName: true }),
  };
}

type Column = ModelAttributeColumnOptions;

export const notNull = (type: DataType, options: Omit<Column, 'type'> = {}): Column => ({ type, allowNull: false, ...options });
export const nullable = (type: DataType): Column => ({ type, allowNull: true });
/** A primary key column (part of one, when a table names several). */
export const primaryKey = (type: DataType, options: Omit<Column, 'type'> = {}): Column => ({ type, allowNull: false, primaryKey: true, ...options });
