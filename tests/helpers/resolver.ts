import { isIP } from 'node:net';
import type { ResolvedAddress, Resolver } from '../../server/src/lib/resolver.ts';

/**
 * Host names with the answers a test gives them, for the service's resolver (deps.resolver):
 * a private address, a public one that turns private before a send (DNS rebinding), no
 * address, or no answer at all. A name never given an answer does not resolve, so no test
 * reaches the real DNS.
 */
export class TestResolver implements Resolver {
  private readonly answers = new Map<string, string[] | 'hang'>();
  /** Every name asked for, in order. */
  readonly asked: string[] = [];

  /** From now on `name` resolves to `addresses` (none: it does not resolve). */
  answer(name: string, addresses: string[]): this {
    this.answers.set(name.toLowerCase(), addresses);
    return this;
  }

  /** From now on a question about `name` is never answered. */
  hang(name: string): this {
    this.answers.set(name.toLowerCase(), 'hang');
    return this;
  }

  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    this.asked.push(hostname);
    const answer = this.answers.get(hostname.toLowerCase());
    if (answer === 'hang') return new Promise<never>(() => {});
    if (!answer?.length) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answer.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
  }
}
