import { ConfigError, loadConfig } from '../../server/src/config.ts';
import { startService, type Role } from './server.ts';

const roleArgument = process.argv.find((arg) => arg.startsWith('--role='))?.slice('--role='.length) ?? 'all';
if (!['all', 'gateway', 'worker'].includes(roleArgument)) {
  console.error(`unknown role "${roleArgument}": use --role=all, --role=gateway or --role=worker`);
  process.exit(2);
}
const role = roleArgument as Role;

let config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(`Gatehouse cannot start: ${error.message}`);
  process.exit(1);
}
if (role !== 'all' && !config.databaseUrl) {
  console.error('Gatehouse cannot start: the embedded database serves one process; set DATABASE_URL to run the gateway and worker separately.');
  process.exit(1);
}

const service = await startService(config, role);
const { logger } = service.deps;
logger.info({ role }, 'Gatehouse started');

let shuttingDown = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, 'shutting down: no new requests, finishing in-flight work');
    const force = setTimeout(() => {
      logger.error('shutdown took longer than 25 s; exiting');
      process.exit(1);
    }, 25_000);
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
