import { chmodSync, lstatSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import type { Deps } from '../index.ts';
import { frameLine, MAX_REQUEST_BYTES, parseRequest, readLines, type CommandRequest, type StreamTraits } from './command-protocol.ts';
import type { CliIo, CliStream } from './io.ts';
import { EXIT } from './output.ts';
import { runAdminCommand } from './program.ts';
import { adminSocketPlace, preparePrivateDir } from './service-socket.ts';

// The service's half of the CLI beside it on the embedded database (forward.ts is the other).
// PGlite serves one process, and the service holds DATA_DIR: so the service runs each of the
// CLI's commands itself, whole, with the same procedures on its own dependencies (one writer,
// its one connection), and sends back what the command writes and its exit code. The
// gateway starts it (gateway/src/server.ts) when the database is the embedded one.

const REQUEST_TIMEOUT_MS = 10_000;

export type AdminCommandServer = { path: string; close(): Promise<void> };

/** The client went away mid-command (`| head`, Ctrl-C): the command stops at its next write. */
class ClientGone extends Error {
  constructor() {
    super('the CLI that asked for this command has gone');
    this.name = 'ClientGone';
  }
}

/** A command's stdout or stderr, as frames on the socket, with the socket's backpressure. */
function frameStream(socket: Socket, key: 'out' | 'err', traits: StreamTraits): CliStream {
  return {
    write(text: string) {
      if (socket.destroyed || !socket.writable) throw new ClientGone();
      return socket.write(frameLine(key === 'out' ? { out: text } : { err: text }));
    },
    once(_event: 'drain', listener: () => void) {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        listener();
      };
      socket.on('drain', done);
      socket.on('close', done);
    },
    isTTY: traits.isTTY,
    columns: traits.columns,
  };
}

/** The command's words that name it (`inbox stats`), for the log: never an address, id or value. */
function commandName(args: string[]): string {
  const words: string[] = [];
  for (const arg of args) {
    if (words.length === 3 || !/^[a-z][a-z-]*$/.test(arg)) break;
    words.push(arg);
  }
  return words.join(' ');
}

/** The first line of a connection: the request, or undefined for anything else within the time allowed. */
function readRequest(socket: Socket): Promise<CommandRequest | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => socket.destroy(), REQUEST_TIMEOUT_MS);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    readLines(
      socket,
      (line) => {
        clearTimeout(timer);
        socket.pause();
        resolve(parseRequest(line));
      },
      MAX_REQUEST_BYTES,
    );
  });
}

/**
 * Listens on DATA_DIR's admin socket (service-socket.ts), mode 0600 in a 0700 directory,
 * replacing one a killed service left. Undefined, with a warning, when the socket cannot be
 * made private: the CLI then finds DATA_DIR in use, as before.
 */
export async function serveAdminCommands(deps: Deps): Promise<AdminCommandServer | undefined> {
  const place = adminSocketPlace(deps.config.dataDir);
  if (place.privateDir && !preparePrivateDir(place.privateDir)) {
    deps.logger.warn({ dir: place.privateDir }, 'the admin CLI socket directory belongs to someone else or is open to others; the CLI cannot run commands beside this service');
    return undefined;
  }
  // DATA_DIR is locked by this process: whatever socket is there is a dead service's.
  if (lstatSync(place.path, { throwIfNoEntry: false })?.isSocket()) rmSync(place.path);
  const running = new Set<Promise<unknown>>();
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    const run = serve(deps, socket);
    running.add(run);
    void run.finally(() => running.delete(run));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(place.path, () => resolve());
  });
  chmodSync(place.path, 0o600);
  return {
    path: place.path,
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      // Commands under way finish on the dependencies they started with, before those close.
      await Promise.allSettled([...running]);
      await closed;
    },
  };
}

async function serve(deps: Deps, socket: Socket): Promise<void> {
  const request = await readRequest(socket);
  if (!request) return void socket.destroy();
  const started = Date.now();
  const io: CliIo = { env: process.env, deps, stdout: frameStream(socket, 'out', request.stdout), stderr: frameStream(socket, 'err', request.stderr) };
  const exitCode = await runAdminCommand(request.args, io).catch((error) => {
    if (!(error instanceof ClientGone)) deps.logger.error({ err: error }, 'an admin command for the CLI failed');
    return EXIT.failure;
  });
  deps.logger.info({ command: commandName(request.args), exitCode, ms: Date.now() - started }, 'admin command run for the CLI');
  if (!socket.destroyed) socket.end(frameLine({ exit: exitCode }));
}
