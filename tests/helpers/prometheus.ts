import { parser } from '@prometheus-io/lezer-promql';
import * as assert from 'uvu/assert';
import { request } from './service.ts';

// Reading what /metrics answers, and what a PromQL expression asks of it, for the suites that
// check the service's metrics against the dashboard, the alert rules and a worker's port.

export type Sample = { name: string; labels: Record<string, string>; value: number };

/** The sample lines of a Prometheus text page. */
export function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      assert.ok(match, `a sample line: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
      return { name: match[1], labels, value: Number(match[3]) };
    });
}

/** `# TYPE` of each metric family: name -> counter, gauge, histogram, summary. */
export function metricTypes(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
}

/** The sum of the samples of `name` whose labels include `labels`; 0 when there is none. */
export function valueOf(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value))
    .reduce((sum, s) => sum + s.value, 0);
}

/** GET /metrics at `base` with the token: its text, after asserting a 200. */
export async function scrape(base: string, token: string): Promise<string> {
  const result = await request(base, 'GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
  assert.is(result.status, 200, result.text);
  return result.text;
}

export type Matcher = { label: string; op: string; value: string };
export type Selector = { name: string; matchers: Matcher[] };
/** `sum by (labels) (…)`: the labels, and the metric names the aggregated expression reads. */
export type Grouping = { labels: string[]; names: string[] };
export type PromqlUse = { selectors: Selector[]; groupings: Grouping[]; errors: string[] };

/** Grafana's interval variables are no PromQL: replaced by a duration as Grafana does. */
const GRAFANA_VARIABLES = /\$__(?:rate_interval|interval|range)\b/g;

type Node = ReturnType<typeof parser.parse>['topNode'];

/**
 * What a PromQL expression reads, parsed with Prometheus's own grammar (lezer-promql): every
 * vector selector with its metric name and label matchers, every aggregation's grouping
 * labels, and the spans the grammar could not read.
 */
export function promqlUse(expression: string): PromqlUse {
  const text = expression.replace(GRAFANA_VARIABLES, '5m');
  const tree = parser.parse(text);
  const of = (node: Node) => text.slice(node.from, node.to);
  const use: PromqlUse = { selectors: [], groupings: [], errors: [] };
  const selectorsUnder = (node: Node): Selector[] => {
    const found: Selector[] = [];
    node.cursor().iterate((ref) => {
      if (ref.name === 'VectorSelector') found.push(selectorOf(ref.node, of));
    });
    return found;
  };
  tree.iterate({
    enter(ref) {
      if (ref.type.isError) use.errors.push(`cannot read "${text.slice(ref.from, Math.max(ref.to, ref.from + 10))}" at ${ref.from}`);
      if (ref.name === 'VectorSelector') use.selectors.push(selectorOf(ref.node, of));
      if (ref.name === 'AggregateExpr') {
        const grouping = ref.node.getChild('AggregateModifier')?.getChild('GroupingLabels');
        if (grouping) use.groupings.push({ labels: grouping.getChildren('LabelName').map(of), names: selectorsUnder(ref.node).map((selector) => selector.name) });
      }
    },
  });
  return use;
}

function selectorOf(node: Node, of: (node: Node) => string): Selector {
  const matchers = (node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []).map((matcher) => ({
    label: of(matcher.getChild('LabelName')!),
    op: of(matcher.getChild('MatchOp')!),
    value: stringValue(of(matcher.getChild('StringLiteral')!)),
  }));
  const byName = matchers.find((matcher) => matcher.label === '__name__' && matcher.op === '=');
  const identifier = node.getChild('Identifier');
  return { name: identifier ? of(identifier) : (byName?.value ?? ''), matchers: matchers.filter((matcher) => matcher !== byName) };
}

/** A PromQL string literal's value: JSON's escapes in double quotes, none in backticks. */
function stringValue(literal: string): string {
  return literal.startsWith('"') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
}
