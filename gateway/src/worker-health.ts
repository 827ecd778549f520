import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { AppError, StartError, type Config, type Deps } from '../../server/src/index.ts';
import { errorHandler, logKoaErrors } from './http.ts';
import { mountHealth } from './routes/health.ts';
import { mountMetrics } from './routes/metrics.ts';

/** A port a worker-only process answers on, and the variable that named it (a failed listen names it). */
type WorkerPort = { port: number; variable: 'HEALTH_PORT' | 'WORKER_METRICS_PORT'; metrics: boolean };

/** HEALTH_PORT and WORKER_METRICS_PORT, as one server when both name the same port. */
function workerPorts(config: Config): WorkerPort[] {
  const ports: WorkerPort[] = [];
  if (config.workerMetricsPort !== undefined) ports.push({ port: config.workerMetricsPort, variable: 'WORKER_METRICS_PORT', metrics: true });
  if (config.healthPort !== undefined && config.healthPort !== config.workerMetricsPort) ports.push({ port: config.healthPort, variable: 'HEALTH_PORT', metrics: false });
  return ports;
}

/**
 * A worker has no gateway, yet a container runtime needs something to probe and Prometheus
 * something to scrape: the worker's own counts (event deliveries, job failures) are in no
 * gateway's /metrics. With HEALTH_PORT set, a worker-only process answers GET /healthz and
 * /readyz there (the gateway's routes); on WORKER_METRICS_PORT, those and GET /metrics
 * (the gateway's route, behind METRICS_TOKEN). Nothing else, and no access log: a scrape
 * every few seconds is not traffic. None of them set, no port is opened.
 */
export async function startWorkerHttp(deps: Deps, role: 'all' | 'gateway' | 'worker', isDraining: () => boolean): Promise<Server[]> {
  if (role !== 'worker') {
    if (deps.config.workerMetricsPort !== undefined) deps.logger.warn({ role }, 'WORKER_METRICS_PORT is read by a worker-only process alone: this one answers /metrics on PORT');
    return [];
  }
  const servers: Server[] = [];
  try {
    for (const port of workerPorts(deps.config)) servers.push(await listen(deps, port, isDraining));
  } catch (error) {
    await closeServers(servers);
    throw error;
  }
  return servers;
}

export async function closeServers(servers: Server[]): Promise<void> {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

async function listen(deps: Deps, { port, variable, metrics }: WorkerPort, isDraining: () => boolean): Promise<Server> {
  const app = new Koa();
  const router = new Router();
  mountHealth(router, deps, isDraining);
  if (metrics) mountMetrics(router, deps);
  app.use(errorHandler());
  app.use(router.routes());
  app.use(() => {
    throw new AppError('NOT_FOUND');
  });
  logKoaErrors(app, deps.logger);
  const server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(namingVariable(error, port, variable)));
    server.listen(port, deps.config.host, () => resolve());
  });
  const { address } = server.address() as AddressInfo;
  deps.logger.info({ port, host: deps.config.host, address, metrics: metrics && Boolean(deps.config.metricsToken) }, metrics ? 'worker metrics and health listening' : 'worker health endpoint listening');
  return server;
}

/** A port in use or refused is the fault of the variable that named it, not of PORT. */
function namingVariable(error: NodeJS.ErrnoException, port: number, variable: string): Error {
  if (error.code === 'EADDRINUSE') return new StartError(variable, `port ${port} is already in use by another process; set ${variable} to a free one`);
  if (error.code === 'EACCES' || error.code === 'EPERM') return new StartError(variable, `not allowed to listen on port ${port}; set ${variable} to 1024 or above`);
  return error;
}
