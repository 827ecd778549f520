import * as assert from 'uvu/assert';
import { request } from './service.ts';

// Reading what /metrics answers, for the suites that check the service's metrics.

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
