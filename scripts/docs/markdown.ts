/**
 * Markdown pieces the generated sections share: marker handling, tables, and JSON Schema
 * (as zod and trpc-to-openapi emit it) turned into words a reader scans.
 */

export type JsonSchema = {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  default?: unknown;
  description?: string;
  /** A default that depends on other settings, in words (config.ts's `.meta({ defaultText })`). */
  defaultText?: string;
};

export const END_MARKER = '<!-- end generated -->';
export const startMarker = (name: string) => `<!-- generated: ${name} -->`;

/** `text` with the lines between the markers of section `name` replaced by `content`. */
export function replaceSection(text: string, name: string, content: string): string {
  const start = startMarker(name);
  const from = text.indexOf(start);
  if (from < 0) throw new Error(`no "${start}" marker`);
  const to = text.indexOf(END_MARKER, from);
  if (to < 0) throw new Error(`"${start}" has no "${END_MARKER}" after it`);
  return `${text.slice(0, from + start.length)}\n${content.trim()}\n${text.slice(to)}`;
}

/** A line that tells an editor where the section comes from; invisible when rendered. */
export const sourceNote = (sources: string) => `<!-- Written by \`npm run docs\` from ${sources}. Edit those, not this section. -->`;

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n+/g, ' ');

export function table(header: string[], rows: string[][]): string {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

export const code = (text: unknown) => `\`${typeof text === 'string' ? text : JSON.stringify(text)}\``;

/** Number.MIN/MAX_SAFE_INTEGER: zod's bounds of every integer, which say nothing to a reader. */
const isSafeIntegerBound = (value: number | undefined) => value !== undefined && Math.abs(value) === Number.MAX_SAFE_INTEGER;

/** The members of a union, or the schema itself. */
const variants = (schema: JsonSchema): JsonSchema[] => schema.anyOf ?? [schema];

export function typeText(schema: JsonSchema): string {
  if (schema.const !== undefined) return code(schema.const);
  if (schema.enum) return `one of ${schema.enum.map(code).join(', ')}`;
  if (schema.anyOf) return schema.anyOf.map(typeText).join(' or ');
  if (Array.isArray(schema.type)) return schema.type.join(' or ');
  if (schema.type === 'string' && schema.format === 'date-time') return 'date-time (ISO-8601)';
  if (schema.type === 'array') return schema.items?.properties ? 'list of objects' : `list of ${typeText(schema.items ?? {})}`;
  return schema.type ?? 'any';
}

function lengthRule(min: number | undefined, max: number | undefined): string | undefined {
  if (min !== undefined && max !== undefined) return min === 1 ? `not empty, at most ${max} characters` : `${min} to ${max} characters`;
  if (max !== undefined) return `at most ${max} characters`;
  if (min !== undefined) return min === 1 ? 'not empty' : `at least ${min} characters`;
  return undefined;
}

function rangeRule(min: number | undefined, max: number | undefined): string | undefined {
  const low = isSafeIntegerBound(min) ? undefined : min;
  const high = isSafeIntegerBound(max) ? undefined : max;
  if (low !== undefined && high !== undefined) return `${low} to ${high}`;
  if (low !== undefined) return `at least ${low}`;
  if (high !== undefined) return `at most ${high}`;
  return undefined;
}

/** Length, range and default of a field, then its description. */
export function rulesText(schema: JsonSchema): string {
  const rules: string[] = [];
  for (const variant of variants(schema)) {
    const length = lengthRule(variant.minLength, variant.maxLength);
    const range = rangeRule(variant.minimum, variant.maximum);
    if (length) rules.push(length);
    if (range) rules.push(range);
  }
  if (schema.default !== undefined) rules.push(`default ${code(schema.default)}`);
  return [rules.join(', '), schema.description].filter(Boolean).join('. ');
}

/** The object a field holds, also when it may be null. */
const objectOf = (schema: JsonSchema): JsonSchema | undefined => variants(schema).find((variant) => variant.properties);

export type FieldRow = { name: string; type: string; required: boolean; rules: string };

/** Every field of an object, nested ones as `user.id` and `items[].id`. */
export function fieldRows(schema: JsonSchema, prefix = ''): FieldRow[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).flatMap(([name, field]) => {
    const path = `${prefix}${name}`;
    const row = { name: path, type: typeText(field), required: required.has(name), rules: rulesText(field) };
    const object = objectOf(field);
    if (object) return [row, ...fieldRows(object, `${path}.`)];
    if (field.type === 'array' && field.items?.properties) return [row, ...fieldRows(field.items, `${path}[].`)];
    return [row];
  });
}

/** An input's fields: name, type, whether required, rules. */
export function inputTable(schema: JsonSchema): string {
  return table(
    ['field', 'type', 'required', 'rules'],
    fieldRows(schema).map((row) => [code(row.name), row.type, row.required ? 'yes' : 'no', row.rules]),
  );
}

/** An answer's fields: name, type, and notes (a field that may be absent says so). */
export function outputTable(schema: JsonSchema): string {
  return table(
    ['field', 'type', 'notes'],
    fieldRows(schema).map((row) => [code(row.name), row.type, [row.required ? '' : 'may be absent', row.rules].filter(Boolean).join('; ')]),
  );
}

/** `{ siteKey, name?, items: [{ id, … }] }`: the keys of an object, two levels deep. */
export function shapeText(schema: JsonSchema, depth = 0): string {
  const properties = Object.entries(schema.properties ?? {});
  if (!properties.length) return 'none';
  const required = new Set(schema.required ?? []);
  const keys = properties.map(([name, field]) => {
    const key = required.has(name) ? name : `${name}?`;
    if (depth >= 1) return key;
    const object = objectOf(field);
    if (object) return `${key}: ${shapeText(object, depth + 1)}${object === field ? '' : ' or null'}`;
    if (field.type === 'array' && field.items?.properties) return `${key}: [${shapeText(field.items, depth + 1)}]`;
    return key;
  });
  return `{ ${keys.join(', ')} }`;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}
