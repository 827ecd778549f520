import { createSoftAuthenticator, type SoftAuthenticator } from '../tests/helpers/webauthn.ts';
import { summarize, type Measurement } from './measurement.ts';
import type { SeededAccount } from './protocol.ts';
import type { BenchContext } from './context.ts';
import type { ServiceProcess } from './service-process.ts';

type SecondFactorAccount = SeededAccount & { authenticator: SoftAuthenticator };

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

/**
 * One account a connection, each with a passkey as its second factor: a passkey, not the
 * authenticator app, because an app's code is accepted once per 30 s step, and a sign-in
 * loop would replay it. The passkey's counter moves on every use, so no two connections
 * share one.
 */
const seeded = new WeakMap<ServiceProcess, Promise<SecondFactorAccount[]>>();

function accountsWithPasskeys(service: ServiceProcess, count: number): Promise<SecondFactorAccount[]> {
  let accounts = seeded.get(service);
  if (!accounts) {
    accounts = service.command<SeededAccount[]>('seed-accounts', { count }).then((made) =>
      Promise.all(
        made.map(async (account) => {
          const authenticator = createSoftAuthenticator(service.info.publicUrl);
          const auth = { authorization: `Bearer ${account.token}` };
          const options = await postJson(`${service.info.url}/api/v1/auth/mfa/passkeys/options`, { password: account.password }, auth);
          const added = await postJson(`${service.info.url}/api/v1/auth/mfa/passkeys`, { response: authenticator.register(options.body.options) }, auth);
          if (added.status !== 200) throw new Error(`login-mfa: the passkey was not added: ${JSON.stringify(added.body)}`);
          return { ...account, authenticator };
        }),
      ),
    );
    seeded.set(service, accounts);
  }
  return accounts;
}

/** The whole sign-in: the password, then the second step with a passkey answer to options for its mfa_token. */
async function signIn(url: string, account: SecondFactorAccount): Promise<void> {
  const first = await postJson(`${url}/api/v1/auth/login`, { email: account.email, password: account.password });
  if (first.status !== 403 || first.body.code !== 'MFA_REQUIRED') throw new Error(`login-mfa: the password step answered ${first.status}`);
  const { mfa_token: mfaToken } = first.body;
  const options = await postJson(`${url}/api/v1/auth/login/passkey/options`, { mfa_token: mfaToken });
  const second = await postJson(`${url}/api/v1/auth/login/mfa`, { mfa_token: mfaToken, response: account.authenticator.authenticate(options.body.options) });
  if (second.status !== 200) throw new Error(`login-mfa: the second step answered ${second.status} ${JSON.stringify(second.body)}`);
}

/**
 * POST /login, then /login/mfa: complete sign-ins per second, `connections` of them signing
 * their own account in back to back. Every sign-in must end with a session, or the run fails.
 */
export const loginWithSecondStep = (connections: number) => async (bench: BenchContext): Promise<Measurement> => {
  const accounts = await accountsWithPasskeys(bench.service, connections);
  const run = async (seconds: number) => {
    const latencies: number[] = [];
    const started = performance.now();
    const until = started + seconds * 1000;
    await Promise.all(
      accounts.map(async (account) => {
        while (performance.now() < until) {
          const begun = performance.now();
          await signIn(bench.service.info.url, account);
          latencies.push(performance.now() - begun);
        }
      }),
    );
    return summarize(latencies, performance.now() - started);
  };
  if (bench.warmupSeconds > 0) await run(bench.warmupSeconds);
  return run(bench.durationSeconds);
};
