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
 * At most this much of the log waits to be written. pino writes stdout off the event loop,
 * so a reader of stdout that stops reading (a stalled log driver) holds up no request, but
 * the lines then wait in memory: past this bound, later lines are dropped (and counted,
 * `log_lines_dropped_total`) rather than held until the process runs out of memory.
 */
const WAITING_LOG_BYTES = 16 * 1024 * 1024;

/** The service's stdout for its log lines, written off the event loop, with at most `maxBytes` waiting; it emits `drop` for each line dropped. */
export function stdoutLogDestination(options: { fd?: number; maxBytes?: number } = {}) {
  return pino.destination({ dest: options.fd ?? 1, sync: false, maxLength: options.maxBytes ?? WAITING_LOG_BYTES });
}

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
