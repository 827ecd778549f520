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

/** The cycles of a directed graph (each node to the nodes it points at), each as the nodes round it, the first again at the end. */
export function cyclesOf(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const target of graph.get(node) ?? []) {
      if (state.get(target) === 'open') found.push([...stack.slice(stack.indexOf(target)), target]);
      else if (!state.has(target)) visit(target);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}
