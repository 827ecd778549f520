/**
 * `npm run docs`: writes the parts of the docs that the code can say for itself (routes,
 * procedures, error codes, rate limits, settings, webhooks) between their markers,
 * `<!-- generated: name -->` and `<!-- end generated -->`, leaving the prose around them.
 * `npm run docs -- --check` writes nothing and exits 1 naming each file that is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorCodesSection, proceduresSection, rateLimitsSection, restRoutesSection } from './docs/api.ts';
import { environmentSection } from './docs/configuration.ts';
import { replaceSection } from './docs/markdown.ts';
import { webhookRoutesSection } from './docs/webhooks.ts';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

type Section = { name: string; render: () => string };

/** Each generated file and its sections, by marker name. */
export const GENERATED: Record<string, Section[]> = {
  'docs/API.md': [
    { name: 'error-codes', render: errorCodesSection },
    { name: 'rate-limits', render: rateLimitsSection },
    { name: 'rest-routes', render: restRoutesSection },
    { name: 'trpc-procedures', render: proceduresSection },
  ],
  'docs/CONFIGURATION.md': [{ name: 'environment', render: () => environmentSection(readFileSync(join(ROOT, '.env.example'), 'utf8')) }],
  'docs/WEBHOOKS.md': [{ name: 'webhook-routes', render: webhookRoutesSection }],
};

/** What `file` holds once its sections are generated afresh. */
export function regenerate(file: string, text: string): string {
  return GENERATED[file].reduce((current, section) => {
    try {
      return replaceSection(current, section.name, section.render());
    } catch (error) {
      throw new Error(`${file}, section ${section.name}: ${(error as Error).message}`);
    }
  }, text);
}

/** The generated files whose text on disk differs from a fresh generation. */
export function staleFiles(): string[] {
  return Object.keys(GENERATED).filter((file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    return regenerate(file, text) !== text;
  });
}

/** `npm run docs` (with `--check`: write nothing): its exit code. */
export function docsCommand(check: boolean): number {
  if (check) {
    const stale = staleFiles();
    for (const file of stale) console.error(`${file} is out of date: run npm run docs`);
    return stale.length ? 1 : 0;
  }
  for (const file of Object.keys(GENERATED)) {
    const path = join(ROOT, file);
    const text = readFileSync(path, 'utf8');
    const fresh = regenerate(file, text);
    if (fresh !== text) writeFileSync(path, fresh);
    console.log(`${file}: ${fresh === text ? 'up to date' : 'written'}`);
  }
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    process.exitCode = docsCommand(process.argv.includes('--check'));
  } catch (error) {
    console.error((error as Error).message);
    process.exitCode = 1;
  }
}
