import { describeStartFailure, loadConfig, StartError } from '../../server/src/index.ts';
import { startService, type Role } from './server.ts';

// The service's entry point: `node dist/gateway/src/main.js --role=…` in the image (its main
// process, so SIGTERM reaches it), `tsx gateway/src/main.ts` under npm scripts.

const roleArgument = process.argv.find((arg) => arg.startsWith('--role='))?.slice('--role='.length) ?? 'all';
if (!['all', 'gateway', 'worker'].includes(roleArgument)) {
  console.error(`Gatehouse cannot start: unknown role "${roleArgument}": use --role=all, --role=gateway or --role=worker`);
  process.exit(2);
}
const role = roleArgument as Role;

/** A failed start is one line naming the cause and the variable to fix, and exit code 1. */
function cannotStart(error: unknown): never {
  console.error(`Gatehouse cannot start: ${describeStartFailure(error)}`);
  process.exit(1);
}

const config = (() => {
  try {
    return loadConfig();
  } catch (error) {
    return cannotStart(error);
  }
})();
if (role !== 'all' && !config.databaseUrl) {
  cannotStart(new StartError('DATABASE_URL', 'the embedded database serves one process; set DATABASE_URL to run the gateway and the worker separately'));
}

const service = await startService(config, role).catch(cannotStart);
const { logger } = service.deps;
logger.info({ role }, 'Gatehouse started');

let shuttingDown = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: no new requests, finishing in-flight work');
    const force = setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown took longer than SHUTDOWN_TIMEOUT; exiting with work unfinished');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    service.stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
