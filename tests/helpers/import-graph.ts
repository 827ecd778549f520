import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root: every path below is relative to it. */
export const root = fileURLToPath(new URL('../..', import.meta.url));

export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

// Static imports and re-exports (with or without bindings) and dynamic import() calls.
const IMPORT = /(?:(?:^|\n)\s*(?:import|export)\s(?:[^'"]*?from\s+)?|\bimport\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g;

/**
 * Project file -> the project files it imports, type-only imports included, read from the
 * files as written (paths relative to the repository).
 */
export function importGraph(dirs = ['server/src', 'gateway/src', 'client/src']): Map<string, string[]> {
  const files = dirs.flatMap((dir) => sourceFiles(join(root, dir)));
  return new Map(
    files.map((file) => {
      const text = readFileSync(file, 'utf8');
      const targets = [...text.matchAll(IMPORT)].map((match) => relative(root, resolve(dirname(file), match[1])));
      return [relative(root, file), targets];
    }),
  );
}
