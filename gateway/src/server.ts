import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { serveAdminCommands } from '../../server/src/cli/serve.ts';
import { errorBody, openDeps, startWorker, warnWithoutAutovacuum, type Config, type Deps, type DepsOverrides, type ErrorCode, type Worker } from '../../server/src/index.ts';
import { createGateway, type Gateway } from './app.ts';
import { closeServers, startWorkerHttp } from './worker-health.ts';

export type Role = 'all' | 'gateway' | 'worker';

const CLIENT_ERRORS: Record<string, [number, ErrorCode]> = {
  HPE_HEADER_OVERFLOW: [431, 'HEADERS_TOO_LARGE'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'REQUEST_TIMEOUT'],
};

/**
 * A request Node could not parse (a control character in a header, say) or that took too
 * long never reaches Koa: it still gets the error body, then the socket closes.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const known = CLIENT_ERRORS[error.code ?? ''] ?? (error.code?.startsWith('HPE_') ? ([400, 'VALIDATION_FAILED'] as const) : undefined);
  if (!known || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code] = known;
  const body = JSON.stringify(errorBody(code, status === 400 ? 'The request could not be parsed.' : undefined));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\n\r\n${body}`,
  );
}

export type RunningService = {
  deps: Deps;
  url: string | undefined;
  server: Server | undefined;
  /** The gateway's request listener (Koa's callback), which `server` serves when there is one. */
  handler: RequestListener | undefined;
  worker: Worker | undefined;
  stop(): Promise<void>;
};

/**
 * Starts the given role: the HTTP gateway, the worker, or both in one process. `stop` is
 * the graceful path: stop accepting, finish what is in flight, then close the database.
 * `options.listen: false` binds no port: the gateway answers only through `handler` (tests
 * that call it in process, where the socket is not the point).
 */
export async function startService(
  config: Config,
  role: Role,
  overrides: DepsOverrides = {},
  options: { listen?: boolean } = {},
): Promise<RunningService> {
  const deps = await openDeps(config, { superviseQueue: role !== 'gateway', authCache: role !== 'worker', ...overrides });
  // Said by the service's processes, not by a command of the CLI. The embedded database is
  // for development: its tables never grow large enough to matter.
  if (!deps.db.embedded) await warnWithoutAutovacuum(deps.db, deps.logger);
  // The embedded database's files serve this process alone: the admin CLI's commands run here.
  const adminCommands = deps.db.embedded ? await serveAdminCommands(deps) : undefined;
  const worker = role === 'gateway' ? undefined : await startWorker(deps, { withGateway: role === 'all' });
  let draining = false;
  // After the worker, so that /readyz there means it runs; a port that cannot be had stops it again.
  const workerPorts = await startWorkerHttp(deps, role, () => draining).catch(async (error: unknown) => {
    await worker?.stop();
    await deps.close();
    throw error;
  });
  let server: Server | undefined;
  let url: string | undefined;
  let gateway: Gateway | undefined;
  if (role !== 'worker') gateway = createGateway(deps);
  const handler = gateway?.app.callback();
  if (handler && options.listen !== false) {
    server = createServer(
      {
        requestTimeout: config.requestTimeoutMs,
        headersTimeout: config.headersTimeoutMs,
        // Node checks the two timeouts above this often; its default of 30 s would let a slow
        // sender keep a connection up to 30 s past them.
        connectionsCheckingInterval: 1000,
        keepAliveTimeout: 65_000,
      },
      handler,
    );
    server.maxConnections = config.maxConnections;
    server.on('clientError', answerClientError);
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.port, config.host, () => resolve());
    });
    const { port, address } = server.address() as AddressInfo;
    url = `http://127.0.0.1:${port}`;
    // `address` as the socket has it: what HOST (a name, or unset) came to.
    deps.logger.info({ port, host: config.host, address, publicUrl: config.publicUrl }, 'gateway listening');
  }
  let stopping: Promise<void> | undefined;
  return {
    deps,
    url,
    server,
    handler,
    worker,
    stop() {
      stopping ??= (async () => {
        draining = true;
        gateway?.startDraining();
        if (gateway) {
          if (server) {
            const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
            // Keep-alive sockets that go idle after their last answer would hold close() open.
            const sweep = setInterval(() => server!.closeIdleConnections(), 100);
            server.closeIdleConnections();
            await closed.finally(() => clearInterval(sweep));
          }
          const left = gateway.inFlight();
          if (left > 0) {
            deps.logger.info({ requests: left }, 'waiting for requests whose clients hung up to finish');
            await gateway.settled();
          }
        }
        await worker?.stop();
        await closeServers(workerPorts);
        await adminCommands?.close();
        await deps.close();
      })();
      return stopping;
    },
  };
}
