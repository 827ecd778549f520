import { withWebhookRoutes } from '../../gateway/src/routes/openapi-webhooks.ts';
import { restDocument } from './api.ts';
import { code, sourceNote, table, type JsonSchema } from './markdown.ts';

type Loose = Record<string, any>;

/** The five webhook operations of the published OpenAPI document, in registry order. */
function webhookOperations(): Array<{ path: string; operation: Loose }> {
  const document = withWebhookRoutes(restDocument(), 'http://localhost:3000');
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) => {
    const operation = (item as Loose).post;
    return operation?.operationId?.startsWith('webhook-') ? [{ path, operation }] : [];
  });
}

function answerText(status: string, response: Loose): string {
  const example = response.content?.['application/json']?.example;
  return status === '200' && example ? `200 ${code(example)}` : status;
}

function webhookSection({ path, operation }: { path: string; operation: Loose }): string {
  const lines = [`### POST ${path}`, '', `${operation.summary}. ${operation.description}`, ''];
  for (const parameter of operation.parameters as Loose[]) {
    const where = parameter.in === 'header' ? 'Header' : 'Path';
    lines.push(`- ${where} ${code(parameter.name)}${parameter.required ? ' (required)' : ''}: ${parameter.description}`);
  }
  const body = operation.requestBody.content['application/json'].schema as JsonSchema;
  const read = body.required?.length ? `; the fields it must have: ${body.required.map(code).join(', ')}` : '';
  lines.push(`- Body: ${body.description ?? 'JSON'} At most 1 MiB${read}.`, '');
  lines.push(table(['answer', 'when'], Object.entries(operation.responses as Loose).map(([status, response]) => [answerText(status, response), response.description])));
  return lines.join('\n');
}

export function webhookRoutesSection(): string {
  const operations = webhookOperations();
  const index = table(
    ['route', 'signature header', 'scope'],
    operations.map(({ path, operation }) => {
      const header = (operation.parameters as Loose[]).find((parameter) => parameter.in === 'header');
      const scope = (operation.parameters as Loose[]).find((parameter) => parameter.in === 'path');
      return [`POST ${path}`, code(header?.name), scope ? code(scope.name) : 'none'];
    }),
  );
  return [
    sourceNote('the webhook registry (server/src/webhooks/registry.ts) and gateway/src/routes/openapi-webhooks.ts'),
    '',
    index,
    '',
    ...operations.map(webhookSection).flatMap((section) => [section, '']),
  ].join('\n');
}
