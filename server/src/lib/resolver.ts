import { lookup } from 'node:dns/promises';

/** One address a name resolves to. */
export type ResolvedAddress = { address: string; family: 4 | 6 };

/**
 * Turns a host name into its addresses. A dependency (deps.resolver) rather than a call to
 * node:dns where it is needed, so that tests can give names the answers they need: a private
 * one, a public one that turns private later, none at all, or none for a long while.
 */
export type Resolver = {
  /** Every address of `hostname`, in the order the system would try them; rejects when there is none. */
  resolve(hostname: string): Promise<ResolvedAddress[]>;
};

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), as every other program on the machine sees names. */
export function createSystemResolver(): Resolver {
  return {
    async resolve(hostname) {
      const answers = await lookup(hostname, { all: true, verbatim: true });
      return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
    },
  };
}
