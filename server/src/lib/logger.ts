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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'gatehouse' },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
