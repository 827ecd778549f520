// The image's HEALTHCHECK: `node dist/healthcheck.js`, exit 0 when this container's process
// is ready. A worker answers on HEALTH_PORT (worker-health.ts), a gateway on PORT. Nothing
// is imported: it runs every few seconds and must start in a few milliseconds.

const port = process.env.HEALTH_PORT || process.env.PORT || '3000';
const timeout = AbortSignal.timeout(2_000);

fetch(`http://127.0.0.1:${port}/readyz`, { signal: timeout }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1),
);
