import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse as parseYaml } from 'yaml';
import { createEndpoint, deleteEndpoint, showDelivery, testEndpoint, updateEndpoint } from '../server/src/modules/events/events.service.ts';
import { RETRY_DELAYS_MS } from '../server/src/modules/events/events.sender.ts';
import { AUTH_RATE_RULES } from '../server/src/router.ts';
import { loginFrom, PASSWORD } from './helpers/auth.ts';
import { EventReceiver } from './helpers/event-receiver.ts';
import { metricTypes, promqlUse, samples, scrape, valueOf, type Sample } from './helpers/prometheus.ts';
import type { TestService } from './helpers/service.ts';
import { eventually } from './helpers/wait.ts';
import { post, startWithOwner, stripeEvent, stripeHeaders, unixNow } from './helpers/webhook-fixtures.ts';

// The dashboard (ops/grafana/gatehouse.json) and the alert rules (ops/prometheus/alerts.yml)
// read only what the service exports: every expression parses as PromQL, and every metric,
// label and matched value it names is in /metrics of a running service once traffic has
// made the labelled series. The rules also pass `promtool check rules` where it is installed
// (CI installs it), and each has its runbook in docs/OPERATIONS.md.

const root = fileURLToPath(new URL('..', import.meta.url));
const DASHBOARD = 'ops/grafana/gatehouse.json';
const RULES = 'ops/prometheus/alerts.yml';
const TOKEN = `dashboard-${randomBytes(16).toString('hex')}`;
const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64url')}`;
/** Labels Prometheus adds to every series when it scrapes a target: in no /metrics page. */
const TARGET_LABELS = new Set(['instance', 'job']);
const OPERATOR = { accountId: null, request: { ip: '127.0.0.1', requestId: 'dashboard-test' } };

type Panel = { id: number; type: string; title: string; gridPos?: unknown; datasource?: { uid?: string }; targets?: Array<{ expr?: unknown; refId?: string }>; panels?: Panel[] };
type Dashboard = { title: string; uid: string; schemaVersion: number; panels: Panel[]; templating?: { list: Array<{ name: string; type: string }> } };
type Rule = { alert?: string; record?: string; expr: unknown; for?: string; annotations?: Record<string, string> };
type Expression = { where: string; expr: string };

const read = (path: string) => readFileSync(`${root}/${path}`, 'utf8');
const dashboard = () => JSON.parse(read(DASHBOARD)) as Dashboard;
const rules = () => (parseYaml(read(RULES)) as { groups: Array<{ name: string; rules: Rule[] }> }).groups.flatMap((group) => group.rules);
const queryPanels = (panels: Panel[]): Panel[] => panels.flatMap((panel) => (panel.type === 'row' ? queryPanels(panel.panels ?? []) : [panel]));

function expressions(): Expression[] {
  return [
    ...queryPanels(dashboard().panels).flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `${DASHBOARD} panel "${panel.title}"`, expr: String(target.expr) }))),
    ...rules().map((rule) => ({ where: `${RULES} ${rule.alert ?? rule.record}`, expr: String(rule.expr) })),
  ];
}

const test = suite('ops/: the Grafana dashboard and the Prometheus alert rules, against /metrics');

test('the dashboard is a Grafana dashboard: schemaVersion, a Prometheus datasource, panels with one expr each', () => {
  const board = dashboard();
  assert.type(board.schemaVersion, 'number');
  assert.ok(board.schemaVersion >= 30, 'a dashboard of Grafana 8 or later');
  assert.ok(board.title && board.uid, 'a title and a uid');
  assert.ok(board.templating?.list.some((variable) => variable.name === 'datasource' && variable.type === 'datasource'), 'the datasource is chosen on import');
  const panels = queryPanels(board.panels);
  assert.ok(panels.length >= 8, `${panels.length} panels`);
  const ids = board.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).map((panel) => panel.id);
  assert.is(new Set(ids).size, ids.length, 'panel ids are unique');
  for (const panel of panels) {
    assert.ok(panel.title && panel.gridPos, `panel ${panel.id} has a title and a place`);
    assert.is(panel.datasource?.uid, '${datasource}', panel.title);
    assert.is(panel.targets?.length, 1, `${panel.title}: one query`);
    assert.type(panel.targets![0].expr, 'string', panel.title);
    // Grafana's own interval: a fixed one is wrong at every zoom but one.
    for (const range of String(panel.targets![0].expr).matchAll(/\[([^\]]+)\]/g)) assert.is(range[1], '$__rate_interval', `${panel.title}: ${range[0]}`);
  }
});

test('the alert rules: the five of the operations guide, each with a runbook in docs/OPERATIONS.md, plain PromQL', () => {
  const list = rules();
  const operations = read('docs/OPERATIONS.md');
  const byName = new Map(list.map((rule) => [rule.alert, rule]));
  assert.is(byName.size, list.length, 'alert names are unique');
  for (const rule of list) {
    assert.ok(rule.alert, 'every rule is an alert');
    assert.type(rule.expr, 'string', rule.alert);
    assert.not.match(String(rule.expr), '$__', `${rule.alert}: Grafana's variables mean nothing to Prometheus`);
    assert.ok(rule.annotations?.summary, `${rule.alert} has a summary`);
    const anchor = rule.alert!.toLowerCase();
    assert.is(rule.annotations?.runbook, `docs/OPERATIONS.md#${anchor}`, `${rule.alert}'s runbook`);
    assert.match(operations, new RegExp(`^#### ${rule.alert}\\n\\n\\S`, 'm'), `docs/OPERATIONS.md has a runbook under #### ${rule.alert}`);
  }
  const expr = (name: string) => String(byName.get(name)?.expr ?? '');
  assert.match(expr('GatehouseServerErrors'), /http_requests_total\{status=~"5\.\."\}/);
  assert.match(expr('GatehouseDeliveryWaiting'), /inbox_oldest_pending_seconds\) > 300$/);
  assert.match(expr('GatehouseDeadDeliveries'), /inbox_deliveries\{state="dead"\}/);
  assert.match(expr('GatehouseEventEndpointDisabled'), /event_endpoints\{state="disabled"\}/);
  assert.match(expr('GatehouseFailedLoginSpike'), /logins_total\{outcome="failed"\}/);
  assert.ok(expressions().length >= 8, 'at least 8 queries in all');
});

test('promtool check rules passes, where promtool is installed (CI installs it)', () => {
  const checked = spawnSync('promtool', ['check', 'rules', RULES], { cwd: root, encoding: 'utf8' });
  if ((checked.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    assert.not.ok(process.env.CI, 'CI installs promtool (.ci/run)');
    return;
  }
  assert.is(checked.status, 0, `${checked.stdout}${checked.stderr}`);
  assert.match(checked.stdout, new RegExp(`SUCCESS: ${rules().length} rules found`));
});

test('every expression parses as PromQL', () => {
  for (const { where, expr } of expressions()) {
    const use = promqlUse(expr);
    assert.equal(use.errors, [], `${where}: ${expr}`);
    assert.ok(use.selectors.length > 0 && use.selectors.every((selector) => selector.name), `${where} names its metrics`);
  }
});

test('the PromQL reader finds names, matchers and groupings, and what it cannot read', () => {
  const use = promqlUse('histogram_quantile(0.9, sum by (route, le) (rate(x_bucket{a="b",c=~"d.."}[$__rate_interval]))) / on() max({__name__="y"})');
  assert.equal(use.errors, []);
  assert.equal(use.selectors, [
    { name: 'x_bucket', matchers: [{ label: 'a', op: '=', value: 'b' }, { label: 'c', op: '=~', value: 'd..' }] },
    { name: 'y', matchers: [] },
  ]);
  assert.equal(use.groupings, [{ labels: ['route', 'le'], names: ['x_bucket'] }]);
  assert.ok(promqlUse('sum(rate(x[5m]) by').errors.length > 0);
});

/** Traffic that makes a series of every labelled metric the files read; the dead event delivery too. */
async function produceTraffic(service: TestService, siteKey: string): Promise<void> {
  await deadEventDelivery(service);
  await deliveredEvent(service);
  // Sign-ins: one failed, and the account-wide cap run down through the limiter, refused.
  const email = `dashboard-${randomBytes(3).toString('hex')}@example.com`;
  assert.is((await loginFrom(service, '127.0.90.1', email, 'not the password')).status, 401);
  for (let i = 0; i < AUTH_RATE_RULES.failedLoginsPerAccount.limit; i++) await service.deps.rateLimiter.hit([{ rule: AUTH_RATE_RULES.failedLoginsPerAccount, key: email }]);
  assert.is((await loginFrom(service, '127.0.90.2', email, PASSWORD)).status, 429);
  // A webhook delivery kept.
  const event = stripeEvent({ type: 'payment_intent.succeeded', created: unixNow(service), object: { id: `pi_${randomBytes(8).toString('hex')}`, object: 'payment_intent', status: 'succeeded' } });
  const payload = JSON.stringify(event);
  assert.is((await post(service, `/webhook/payment/${siteKey}`, payload, stripeHeaders(payload, WEBHOOK_SECRET, unixNow(service)))).status, 200);
  await jobFailure(service);
}

/** A ping to an endpoint that always fails, tried until it is dead; the endpoint then disabled. */
async function deadEventDelivery(service: TestService): Promise<void> {
  const receiver = await EventReceiver.start();
  receiver.mode = 'fail';
  const { endpoint } = await createEndpoint(service.deps, OPERATOR, { url: receiver.url });
  try {
    const { delivery_id } = await testEndpoint(service.deps, OPERATOR, endpoint.id);
    const attempts = async () => (await showDelivery(service.deps, OPERATOR, delivery_id)).delivery;
    await eventually('the first attempt', async () => (await attempts()).attempts === 1);
    for (let tried = 1; tried <= RETRY_DELAYS_MS.length; tried++) {
      // Past the wait after this failure with its most jitter: the next attempt is due.
      service.clock.advance(Math.ceil(RETRY_DELAYS_MS[tried - 1] * 1.2) + 1000);
      await eventually(`attempt ${tried + 1}`, async () => (await attempts()).attempts === tried + 1);
    }
    assert.is((await attempts()).state, 'dead');
    await updateEndpoint(service.deps, OPERATOR, { id: endpoint.id, enabled: false });
  } finally {
    await receiver.close();
  }
}

async function deliveredEvent(service: TestService): Promise<void> {
  const receiver = await EventReceiver.start();
  const { endpoint, secret } = await createEndpoint(service.deps, OPERATOR, { url: receiver.url });
  receiver.secrets = [secret];
  try {
    await testEndpoint(service.deps, OPERATOR, endpoint.id);
    await eventually('the ping delivered', () => receiver.delivered().length === 1);
  } finally {
    await deleteEndpoint(service.deps, OPERATOR, endpoint.id);
    await receiver.close();
  }
}

/** An inbox row its provider cannot parse: its job fails (and would be retried; it is removed once counted). */
async function jobFailure(service: TestService): Promise<void> {
  const before = valueOf(await scrape(service.url, TOKEN), 'job_failures_total');
  const id = randomUUID();
  await service.deps.db.query(`INSERT INTO webhook_inbox (id, provider, scope, external_id, payload, received_at) VALUES ($1, 'billing', '', $2, $3, $4)`, [
    id,
    randomUUID(),
    Buffer.from('not json'),
    service.clock.now(),
  ]);
  await eventually('the job failed', async () => valueOf(await scrape(service.url, TOKEN), 'job_failures_total') > before);
  await service.deps.db.query('DELETE FROM webhook_inbox WHERE id = $1', [id]);
}

/** The family a series belongs to: `x_bucket`, `x_sum` and `x_count` are histogram x's. */
function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  const base = /^(.*)_(?:bucket|sum|count)$/.exec(name)?.[1];
  return base && ['histogram', 'summary'].includes(types.get(base) ?? '') ? base : undefined;
}

const labelsOf = (series: Sample[], name: string) => new Set(series.filter((sample) => sample.name === name).flatMap((sample) => Object.keys(sample.labels)));

test('every metric, label and matched value the files read is in /metrics of a running service', async () => {
  const { service, caller } = await startWithOwner({ METRICS_TOKEN: TOKEN, RATE_LIMITS: 'on' }, 'dashboard');
  try {
    const { siteKey } = await caller.sites.create({ name: 'Shop', paymentWebhookSecret: WEBHOOK_SECRET });
    await produceTraffic(service, siteKey);
    const text = await scrape(service.url, TOKEN);
    const types = metricTypes(text);
    const series = samples(text);
    const checked = new Set<string>();
    for (const { where, expr } of expressions()) {
      const use = promqlUse(expr);
      for (const { name, matchers } of use.selectors) {
        assert.ok(familyOf(name, types), `${where}: ${name} is not in /metrics`);
        const labels = labelsOf(series, name);
        for (const matcher of matchers.filter((m) => !TARGET_LABELS.has(m.label))) assert.ok(labels.has(matcher.label), `${where}: ${name} has no label ${matcher.label}`);
        const equal = matchers.filter((m) => m.op === '=');
        const matching = series.filter((sample) => sample.name === name && equal.every((m) => sample.labels[m.label] === m.value));
        assert.ok(matching.length > 0, `${where}: no series of ${name}{${equal.map((m) => `${m.label}="${m.value}"`).join(',')}}`);
        // A regular expression may rightly match nothing yet (no 5xx in a healthy run): it must compile.
        for (const matcher of matchers.filter((m) => m.op === '=~' || m.op === '!~')) assert.not.throws(() => new RegExp(matcher.value), `${where}: ${matcher.value}`);
        checked.add(name);
      }
      for (const grouping of use.groupings) {
        const labels = new Set(grouping.names.flatMap((name) => [...labelsOf(series, name)]));
        for (const label of grouping.labels.filter((l) => !TARGET_LABELS.has(l))) assert.ok(labels.has(label), `${where}: no metric of ${grouping.names.join(', ')} has the label ${label} it is grouped by`);
      }
    }
    // What the operations guide says the dashboard shows, each read by something.
    for (const name of ['http_requests_total', 'http_request_duration_seconds_bucket', 'logins_total', 'rate_limit_refusals_total', 'webhook_deliveries_total', 'inbox_deliveries', 'inbox_oldest_pending_seconds', 'event_deliveries_total', 'event_oldest_pending_seconds', 'event_endpoints', 'job_failures_total', 'process_resident_memory_bytes']) {
      assert.ok(checked.has(name), `nothing reads ${name}`);
    }
    assert.is(valueOf(text, 'event_endpoints', { state: 'disabled' }), 1, 'the endpoint disabled above');
    assert.is(valueOf(text, 'event_deliveries_total', { type: 'ping', outcome: 'dead' }), 1);
  } finally {
    await service.close();
  }
});

test.run();
