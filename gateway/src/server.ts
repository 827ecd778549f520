import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../server/src/config.ts';
import { createDeps, type Deps, type DepsOverrides } from '../../server/src/deps.ts';
import { startWorker, type Worker } from '../../server/src/worker.ts';
import { createGateway } from './app.ts';

export type Role = 'all' | 'gateway' | 'worker';

export type RunningService = {
  deps: Deps;
  url: string | undefined;
  server: Server | undefined;
  worker: Worker | undefined;
  stop(): Promise<void>;
};

/**
 * Starts the given role: the HTTP gateway, the worker, or both in one process. `stop` is
 * the graceful path: stop accepting, finish what is in flight, then close the database.
 */
export async function startService(config: Config, role: Role, overrides: DepsOverrides = {}): Promise<RunningService> {
  const deps = await createDeps(config, { superviseQueue: role !== 'gateway', authCache: role !== 'worker', ...overrides });
  const worker = role === 'gateway' ? undefined : await startWorker(deps, { withGateway: role === 'all' });
  let server: Server | undefined;
  let url: string | undefined;
  let drain = () => {};
  if (role !== 'worker') {
    const gateway = createGateway(deps);
    drain = gateway.startDraining;
    server = createServer(gateway.app.callback());
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.port, config.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    url = `http://127.0.0.1:${port}`;
    deps.logger.info({ port, host: config.host, publicUrl: config.publicUrl }, 'gateway listening');
  }
  let stopping: Promise<void> | undefined;
  return {
    deps,
    url,
    server,
    worker,
    stop() {
      stopping ??= (async () => {
        drain();
        if (server) {
          const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
          // Keep-alive sockets that go idle after their last answer would hold close() open.
          const sweep = setInterval(() => server!.closeIdleConnections(), 100);
          server.closeIdleConnections();
          await closed.finally(() => clearInterval(sweep));
        }
        await worker?.stop();
        await deps.close();
      })();
      return stopping;
    },
  };
}
