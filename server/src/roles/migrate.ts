import { loadConfig } from '../config.ts';
import { createSecretBox } from '../lib/crypto.ts';
import { createDatabase } from '../lib/db.ts';
import { createLogger } from '../lib/logger.ts';
import { migrate } from '../migrations/index.ts';
import { describeStartFailure } from './start-failure.ts';

// `npm run migrate` (the image's `migrate` service): pending migrations, then exit. A
// failure is one line naming what to fix, like a failed start, and exit code 1.

try {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const db = await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 2, logger });
  try {
    const applied = await migrate(db, logger, { secretBox: createSecretBox(config.dataKeys), dataKeys: config.dataKeys });
    logger.info({ applied: applied.length }, applied.length ? 'database migrated' : 'database already up to date');
  } finally {
    await db.close();
  }
} catch (error) {
  console.error(`Gatehouse cannot migrate: ${describeStartFailure(error)}`);
  process.exit(1);
}
