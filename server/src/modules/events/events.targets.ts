import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { ResolvedAddress, Resolver } from '../../lib/resolver.ts';
import { CREDENTIALS_REFUSED } from './events.schemas.ts';

// Where events may go (docs/EVENTS.md, Where events may go): a receiver the operators name
// must not turn the sender into a way into the service's own network (server-side request
// forgery). An endpoint's host must resolve only to public unicast addresses, unless
// EVENTS_ALLOWED_NETWORKS opens a range; link-local, where cloud metadata answers, never.
// The same check runs at create and update and before every send, on the address the send
// then connects to, so a name that answers otherwise later (DNS rebinding) gains nothing.

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Network = [Address, number];

/** A name that has no address within this is refused at create and update, and fails a send. */
export const RESOLVE_TIMEOUT_MS = 2_000;

const ALLOWED_NETWORKS_SETTING = 'EVENTS_ALLOWED_NETWORKS';

/** What ipaddr.js calls a range, as the operators read it. */
const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  uniqueLocal: 'a private address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved or documentation address',
  benchmarking: 'a benchmarking address',
};

/** Where a receiver inside the operators' own network may be: the refusal names the setting that opens them. */
const IN_NETWORK_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat']);

const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/**
 * The IPv4 addresses an IPv6 address carries, by which it is judged: IPv4-mapped and
 * -translated, NAT64, the deprecated IPv4-compatible form, 6to4 (its relay's address), and
 * Teredo (its server's and, obfuscated, its client's: both must pass).
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const parts = address.parts;
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145' || address.match(NAT64)) return [ipv4Of(parts[6], parts[7])];
  if (range === '6to4') return [ipv4Of(parts[1], parts[2])];
  if (range === 'teredo') return [ipv4Of(parts[2], parts[3]), ipv4Of(~parts[6] & 0xffff, ~parts[7] & 0xffff)];
  if (address.match(IPV4_COMPATIBLE) && range !== 'loopback' && range !== 'unspecified') return [ipv4Of(parts[6], parts[7])];
  return [];
}

/** Why `address` is refused, or null when events may go there. */
export type TargetPolicy = { refusal(address: string): string | null };

/** The rule for one address as written (an IPv4 or IPv6 literal, without brackets). */
export function createTargetPolicy(allowedNetworks: readonly string[]): TargetPolicy {
  const allowed: Network[] = allowedNetworks.map((cidr) => ipaddr.parseCIDR(cidr));
  const opened = (address: Address) => allowed.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));

  const judge = (address: Address, shown: string): string | null => {
    const range = address.range();
    if (range === 'linkLocal') return `${shown}, a link-local address (where cloud metadata services answer): events never go there`;
    if (opened(address) || range === 'unicast') return null;
    const what = `${shown}, ${RANGE_NAMES[range] ?? 'a special-purpose address'}: events go to public addresses only`;
    return IN_NETWORK_RANGES.has(range) ? `${what}; for a receiver inside your network, add its range to ${ALLOWED_NETWORKS_SETTING}` : what;
  };

  return {
    refusal(text) {
      if (!ipaddr.isValid(text)) return `${text}, which is not an IP address`;
      const address = ipaddr.parse(text);
      if (address.kind() === 'ipv4') return judge(address, address.toString());
      const ipv6 = address as ipaddr.IPv6;
      const inside = embeddedIPv4(ipv6);
      if (!inside.length) return judge(ipv6, ipv6.toString());
      for (const ipv4 of inside) {
        const refused = judge(ipv4, `${ipv6.toString()}, which holds ${ipv4.toString()}`);
        if (refused) return refused;
      }
      return null;
    },
  };
}

const policies = new WeakMap<readonly string[], TargetPolicy>();

/** The policy of a configuration's list, made once per list. */
export function targetPolicyOf(allowedNetworks: readonly string[]): TargetPolicy {
  let policy = policies.get(allowedNetworks);
  if (!policy) policies.set(allowedNetworks, (policy = createTargetPolicy(allowedNetworks)));
  return policy;
}

/** What targets are checked with: the resolver and EVENTS_ALLOWED_NETWORKS. */
export type TargetDeps = { resolver: Resolver; config: { eventsAllowedNetworks: readonly string[] } };

/** The address a send connects to, or why there is none it may connect to (said of the URL). */
export type TargetCheck = { address: ResolvedAddress } | { refused: string };

/** Resolves within RESOLVE_TIMEOUT_MS, or rejects; a resolver that never answers holds nothing up. */
function resolveWithin(resolver: Resolver, hostname: string): Promise<ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no answer in time')), RESOLVE_TIMEOUT_MS);
  });
  return Promise.race([resolver.resolve(hostname), timeout]).finally(() => clearTimeout(timer));
}

/**
 * Whether events may go to `url`: credentials refused, its host resolved (a literal address
 * as it is), every address it resolves to allowed. The address to connect to is the first.
 */
export async function checkTarget(deps: TargetDeps, url: URL): Promise<TargetCheck> {
  if (url.username || url.password) return { refused: CREDENTIALS_REFUSED };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const policy = targetPolicyOf(deps.config.eventsAllowedNetworks);
  const literal = isIP(host);
  if (literal) {
    const refused = policy.refusal(host);
    return refused ? { refused: `points at ${refused}` } : { address: { address: host, family: literal === 6 ? 6 : 4 } };
  }
  const addresses = await resolveWithin(deps.resolver, host).catch(() => []);
  if (!addresses.length) return { refused: `has a host that does not resolve (${host} had no address within ${RESOLVE_TIMEOUT_MS / 1000} s)` };
  for (const { address } of addresses) {
    const refused = policy.refusal(address);
    if (refused) return { refused: `has a host that resolves to ${refused}` };
  }
  return { address: addresses[0] };
}
