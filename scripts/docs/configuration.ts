import { z } from 'zod';
import { envSchema } from '../../server/src/config.ts';
import { code, headingAnchor, sourceNote, table, type JsonSchema } from './markdown.ts';

/** Variables explained by one comment block of `.env.example`, with the values it shows. */
export type EnvGroup = { comment: string; variables: Array<{ name: string; example: string }> };

/**
 * The blocks of `.env.example`: comment lines, then the `NAME=value` lines they explain. The
 * file's opening comment (followed by a blank line, not by variables) is not a block.
 */
export function parseEnvExample(text: string): EnvGroup[] {
  const groups: EnvGroup[] = [];
  let comment: string[] = [];
  let current: EnvGroup | undefined;
  for (const line of text.split('\n').map((raw) => raw.trim())) {
    const variable = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (line.startsWith('#')) {
      if (current) [current, comment] = [undefined, []];
      comment.push(line.replace(/^#\s?/, ''));
    } else if (variable) {
      if (!current) groups.push((current = { comment: comment.join(' '), variables: [] }));
      current.variables.push({ name: variable[1], example: variable[2] });
      comment = [];
    } else {
      [current, comment] = [undefined, []];
    }
  }
  return groups;
}

/** Each variable of the schema, as JSON Schema: defaults, enums and ranges. */
export function schemaVariables(): Record<string, JsonSchema> {
  const schema = z.toJSONSchema(envSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return schema.properties ?? {};
}

function acceptedText(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map(code).join(', ');
  if (schema.type === 'integer') return `whole number, ${schema.minimum} to ${schema.maximum}`;
  return '';
}

const defaultText = (schema: JsonSchema) =>
  schema.defaultText ?? (schema.default === undefined ? 'unset' : schema.default === '' ? 'empty' : code(String(schema.default)));

/** Every variable of the schema in `.env.example` and the other way round, and the defaults they show agree. */
function checkAgreement(groups: EnvGroup[], variables: Record<string, JsonSchema>): void {
  const listed = groups.flatMap((group) => group.variables);
  const problems = [
    ...Object.keys(variables).filter((name) => !listed.some((variable) => variable.name === name)).map((name) => `${name} is not in .env.example`),
    ...listed.filter(({ name }) => !variables[name]).map(({ name }) => `.env.example lists ${name}, which server/src/config.ts does not read`),
    ...listed
      .filter(({ name, example }) => example !== '' && variables[name]?.default !== undefined && String(variables[name].default) !== example)
      .map(({ name, example }) => `.env.example shows ${name}=${example}, the default is ${String(variables[name].default)}`),
    ...groups.filter((group) => !group.comment).map((group) => `.env.example: ${group.variables[0].name} has no comment above it`),
  ];
  if (problems.length) throw new Error(problems.join('\n'));
}

const groupHeading = (group: EnvGroup) => group.variables.map((variable) => variable.name).join(', ');

export function environmentSection(envExample: string): string {
  const groups = parseEnvExample(envExample);
  const variables = schemaVariables();
  checkAgreement(groups, variables);
  const rows = groups.flatMap((group) =>
    group.variables.map(({ name }) => [`[${code(name)}](#${headingAnchor(groupHeading(group))})`, defaultText(variables[name]), acceptedText(variables[name])]),
  );
  const sections = groups.map((group) => [`### ${groupHeading(group)}`, '', group.comment].join('\n'));
  return [
    sourceNote('`envSchema` in server/src/config.ts (names, defaults, values) and the comments of .env.example (meanings)'),
    '',
    table(['variable', 'default', 'values'], rows),
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
}
