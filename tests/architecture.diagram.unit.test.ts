import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cyclesOf, importGraph, root } from './helpers/import-graph.ts';

// docs/ARCHITECTURE.md draws the layers as a mermaid flowchart: this suite reads its nodes and
// arrows and holds them to the imports, so the picture a newcomer trusts is the code's.

const test = suite("architecture: docs/ARCHITECTURE.md's diagram is the imports");

const PAGE = 'docs/ARCHITECTURE.md';

type Node = { id: string; paths: string[] };
/** `below`: folders left out of the picture because every drawn layer may import them. */
type Diagram = { nodes: Node[]; arrows: Array<[string, string]>; below: string[] };
/** An arrow `from --> to` says that some file of `from` imports some file of `to`. */
type Arrow = { from: string; to: string; because: string };

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"' };
const decode = (text: string) => text.replace(/&(?:lt|gt|amp|quot);/g, (entity) => ENTITIES[entity]);

/**
 * The paths a label names: its first line (before `<br/>`), parts split by ` + ` or `, `,
 * each relative to its subgraph's folder (the first word of the subgraph's label). A part
 * ending in `/` is a folder; a `<placeholder>/` segment stands for any folder below.
 */
function labelPaths(label: string, base: string): string[] {
  const head = decode(label.split('<br/>')[0]);
  return head
    .split(/ \+ |, /)
    .map((part) => part.trim().replace(/<[^>]+>\/$/, ''))
    .map((part) => `${base}/${part}`);
}

const ids = (chain: string) => chain.split('&').map((id) => id.trim());

/**
 * The first mermaid flowchart of the page: its nodes with the paths they stand for, its
 * arrows (`a --> b`, or `a & b --> c & d` for each pair), and the comment naming what it
 * leaves out below (`%% not drawn, below every node: server/src/lib/, …`).
 */
function parseDiagram(markdown: string): Diagram {
  const block = /```mermaid\n(flowchart[\s\S]*?)```/.exec(markdown)?.[1];
  if (!block) throw new Error(`${PAGE} has no mermaid flowchart`);
  const diagram: Diagram = { nodes: [], arrows: [], below: [] };
  let base = '';
  for (const line of block.split('\n').map((text) => text.trim())) {
    const subgraph = /^subgraph\s+\w+\["([^"]+)"\]$/.exec(line);
    const node = /^(\w+)\["([^"]+)"\]$/.exec(line);
    const arrow = /^(\w+(?:\s*&\s*\w+)*)\s*-->\s*(\w+(?:\s*&\s*\w+)*)$/.exec(line);
    const below = /^%%\s*not drawn, below every node:\s*(.+)$/.exec(line);
    if (subgraph) base = subgraph[1].split(/\s/)[0];
    else if (line === 'end') base = '';
    else if (node) diagram.nodes.push({ id: node[1], paths: labelPaths(node[2], base) });
    else if (arrow) for (const from of ids(arrow[1])) for (const to of ids(arrow[2])) diagram.arrows.push([from, to]);
    else if (below) diagram.below.push(...below[1].split(/,\s*/));
    else if (line && !/^(flowchart\b|%%)/.test(line)) throw new Error(`${PAGE}: a diagram line this test cannot read: ${line}`);
  }
  return diagram;
}

/** The node a file belongs to: the one naming it, or the deepest folder holding it. */
function nodeOf(file: string, nodes: Node[]): string | undefined {
  let best: { id: string; length: number } | undefined;
  for (const { id, paths } of nodes) {
    for (const path of paths) {
      const holds = path.endsWith('/') ? file.startsWith(path) : file === path;
      if (holds && (!best || path.length > best.length)) best = { id, length: path.length };
    }
  }
  return best?.id;
}

/** Every arrow the imports draw between two drawn nodes, each with one import that makes it. */
function importArrows(graph: Map<string, string[]>, nodes: Node[]): Arrow[] {
  const arrows = new Map<string, Arrow>();
  for (const [file, targets] of [...graph].sort(([a], [b]) => a.localeCompare(b))) {
    const from = nodeOf(file, nodes);
    if (!from) continue;
    for (const target of targets) {
      const to = nodeOf(target, nodes);
      const key = `${from} --> ${to}`;
      if (to && to !== from && !arrows.has(key)) arrows.set(key, { from, to, because: `${file} imports ${target}` });
    }
  }
  return [...arrows.values()];
}

/** What to change in the diagram so that its arrows are the imports' arrows, one line each. */
function diagramFixes(diagram: Diagram, imports: Arrow[]): string[] {
  const drawn = new Set(diagram.arrows.map(([from, to]) => `${from} --> ${to}`));
  const real = new Set(imports.map(({ from, to }) => `${from} --> ${to}`));
  const label = (id: string) => diagram.nodes.find((node) => node.id === id)?.paths.join(' + ') ?? `(no node ${id})`;
  return [
    ...imports.filter(({ from, to }) => !drawn.has(`${from} --> ${to}`)).map(({ from, to, because }) => `add the arrow "${from} --> ${to}": ${because}`),
    ...diagram.arrows
      .filter(([from, to]) => !real.has(`${from} --> ${to}`))
      .map(([from, to]) => `remove the arrow "${from} --> ${to}": nothing in ${label(from)} imports ${label(to)}`),
  ];
}

/** Imports from a folder left out below the picture into a drawn node: it is not below then. */
function importsFromBelow(graph: Map<string, string[]>, diagram: Diagram): string[] {
  return [...graph].flatMap(([file, targets]) => {
    const folder = diagram.below.find((path) => file.startsWith(path));
    if (!folder) return [];
    return targets
      .filter((target) => nodeOf(target, diagram.nodes))
      .map((target) => `${file} imports ${target} (node "${nodeOf(target, diagram.nodes)}"): draw ${folder} as a node with its arrows, or move that import`);
  });
}

const diagram = parseDiagram(readFileSync(join(root, PAGE), 'utf8'));

test('every node of the diagram names files and folders that exist, each drawn once', () => {
  assert.ok(diagram.nodes.length >= 10, `${diagram.nodes.length} nodes read`);
  const missing = diagram.nodes.flatMap(({ id, paths }) => paths.filter((path) => !existsSync(join(root, path))).map((path) => `${id}: ${path}`));
  assert.equal(missing, [], `${PAGE}'s diagram names paths the repository does not have`);
  const paths = diagram.nodes.flatMap((node) => node.paths);
  assert.equal(paths.filter((path, index) => paths.indexOf(path) !== index), [], 'a path drawn twice');
  const declared = new Set(diagram.nodes.map((node) => node.id));
  assert.equal(diagram.arrows.flat().filter((id) => !declared.has(id)), [], 'arrows between nodes the diagram does not declare');
});

test("the diagram's arrows are exactly the imports between its nodes, type-only imports included", () => {
  const fixes = diagramFixes(diagram, importArrows(importGraph(['server/src', 'gateway/src']), diagram.nodes));
  assert.ok(fixes.length === 0, `${PAGE}'s layer diagram differs from the imports:\n  ${fixes.join('\n  ')}\n`);
});

test('what the diagram leaves out below its nodes imports none of them', () => {
  assert.equal(diagram.below.filter((path) => !existsSync(join(root, path))), []);
  const wrong = importsFromBelow(importGraph(['server/src']), diagram);
  assert.ok(wrong.length === 0, `${PAGE}'s diagram leaves out ${diagram.below.join(' and ')} as below every node, but:\n  ${wrong.join('\n  ')}\n`);
});

/** The cycles among the diagram's arrows, each as `a --> b --> a`: an arrow in one runs back up. */
function layerCycles(arrows: Array<[string, string]>): string[] {
  const next = new Map<string, string[]>();
  for (const [from, to] of arrows) next.set(from, [...(next.get(from) ?? []), to]);
  return cyclesOf(next).map((cycle) => cycle.join(' --> '));
}

test('the layers point one way: no arrow of the diagram (so no import between its nodes) runs back up', () => {
  assert.equal(layerCycles(diagram.arrows), [], `${PAGE}'s layers import each other in a circle`);
  assert.equal(layerCycles([['deps', 'config'], ['deps', 'secrets'], ['secrets', 'deps']]), ['deps --> secrets --> deps'], 'a circle is found');
});

const SAMPLE = [
  '```mermaid',
  'flowchart TB',
  '  %% not drawn, below every node: server/src/errors/',
  '  subgraph server["server/src"]',
  '    face["index.ts<br/>the face"]',
  '    modules["modules/&lt;name&gt;/<br/>modules"]',
  '    lib["lib/ + deps.ts"]',
  '    cli["cli/"]',
  '  end',
  '  face & cli --> lib',
  '  cli --> face',
  '```',
].join('\n');

test('a diagram is read into its nodes, the paths they stand for, its arrows and what it leaves out', () => {
  assert.equal(parseDiagram(SAMPLE), {
    nodes: [
      { id: 'face', paths: ['server/src/index.ts'] },
      { id: 'modules', paths: ['server/src/modules/'] },
      { id: 'lib', paths: ['server/src/lib/', 'server/src/deps.ts'] },
      { id: 'cli', paths: ['server/src/cli/'] },
    ],
    arrows: [
      ['face', 'lib'],
      ['cli', 'lib'],
      ['cli', 'face'],
    ],
    below: ['server/src/errors/'],
  });
});

test('a missing arrow and a drawn arrow that no import makes are both named, with the line to change', () => {
  const sample = parseDiagram(SAMPLE);
  const graph = new Map([
    ['server/src/cli/admin.ts', ['server/src/index.ts', 'server/src/lib/text.ts']],
    ['server/src/index.ts', ['server/src/modules/accounts/index.ts', 'server/src/errors/errors.ts']],
    ['server/src/modules/accounts/index.ts', ['server/src/modules/accounts/accounts.service.ts', 'server/src/config.ts']],
    ['server/src/modules/accounts/accounts.service.ts', ['server/src/deps.ts']],
    ['server/src/errors/errors.ts', ['server/src/lib/validation.ts']],
  ]);
  assert.equal(diagramFixes(sample, importArrows(graph, sample.nodes)), [
    'add the arrow "face --> modules": server/src/index.ts imports server/src/modules/accounts/index.ts',
    'add the arrow "modules --> lib": server/src/modules/accounts/accounts.service.ts imports server/src/deps.ts',
    'remove the arrow "face --> lib": nothing in server/src/index.ts imports server/src/lib/ + server/src/deps.ts',
  ]);
  assert.equal(importsFromBelow(graph, sample), [
    'server/src/errors/errors.ts imports server/src/lib/validation.ts (node "lib"): draw server/src/errors/ as a node with its arrows, or move that import',
  ]);
});

test('a diagram line the parser cannot read fails rather than being skipped', () => {
  assert.throws(() => parseDiagram('```mermaid\nflowchart TB\n  a -.-> b\n```'), /cannot read: a -\.-> b/);
});

test.run();
