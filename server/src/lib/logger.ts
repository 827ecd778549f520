import pino, { type Logger } from 'pino';

export type { Logger };

/** Paths that may hold secrets anywhere in a log object; pino replaces them before writing. */
const REDACT_PATHS = [
  'password',
  'token',
  'apiKey',
  'api_key',
  'secret',
  'signature',
  'authorization',
  'cookie',
  '*.password',
  '*.token',
  '*.apiKey',
  '*.api_key',
  '*.secret',
  '*.botToken',
  '*.paymentWebhookSecret',
  '*.secretToken',
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["paddle-signature"]',
  'req.headers["stripe-signature"]',
  'req.headers["x-telegram-bot-api-secret-token"]',
  'req.headers["x-viber-content-signature"]',
  'res.headers["set-cookie"]',
];

/**
 * A logger writing to `destination`, or to stdout off the event loop: each request logs a
 * line at `info`, and a synchronous write per line cost `/me` 14% to 17% of its rate where
 * these cost 8% (docs/OPERATIONS.md, Logs). pino writes what still waits when the process
 * exits.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'gatehouse' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination ?? pino.destination({ dest: 1, sync: false }),
  );
}
