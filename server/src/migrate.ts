import { loadConfig } from './config.ts';
import { createDatabase } from './lib/db.ts';
import { createLogger } from './lib/logger.ts';
import { migrate } from './lib/migrator.ts';

const config = loadConfig();
const logger = createLogger(config.logLevel);
const db = await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger });
try {
  const applied = await migrate(db, logger);
  logger.info({ applied: applied.length }, applied.length ? 'database migrated' : 'database already up to date');
} finally {
  await db.close();
}
