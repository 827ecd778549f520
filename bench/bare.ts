import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

/** The baseline: the least a Koa JSON answer costs on this machine, in the service's process. */
export async function startBareServer(): Promise<{ url: string; server: Server }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { success: true, message: 'bare' };
  });
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
