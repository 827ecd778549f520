import type { Socket } from 'node:net';
import type { CliIo, CliStream } from './io.ts';
import { frameLine, readLines, type CommandFrame, type StreamTraits } from './command-protocol.ts';
import { EXIT } from './output.ts';
import { connectToService } from './service-socket.ts';

// The CLI's half of a command a running service runs for it (serve.ts is the other): the
// command's words go to the service, and what it writes comes back, as it writes it, to this
// process's stdout and stderr, a slow reader slowing the service's writing down.

/** The DATA_DIR a command would open; undefined on PostgreSQL, where every process opens its own connections. */
export function embeddedDataDir(env: NodeJS.ProcessEnv): string | undefined {
  return env.DATABASE_URL ? undefined : env.DATA_DIR || './.data';
}

/** Thrown where a command finds DATA_DIR held by a service that then answered on its socket: the whole command goes there. */
export class ServedByService extends Error {
  constructor(readonly socket: Socket) {
    super('a running service holds DATA_DIR');
    this.name = 'ServedByService';
  }
}

const traitsOf = (stream: CliStream): StreamTraits => ({ isTTY: Boolean(stream.isTTY), columns: stream.isTTY ? stream.columns : undefined });

/** Runs the command on the service behind `socket`; its exit code, as the service's run of it gave it. */
export function runOnService(socket: Socket, args: string[], io: CliIo): Promise<number> {
  return new Promise((resolve) => {
    let exitCode: number | undefined;
    const write = (stream: CliStream, text: string) => {
      // A reader that cannot keep up (`| gzip > file`): stop reading until it can.
      if (stream.write(text) === false && stream.once) {
        socket.pause();
        stream.once('drain', () => socket.resume());
      }
    };
    readLines(socket, (line) => {
      let frame: CommandFrame;
      try {
        frame = JSON.parse(line) as CommandFrame;
      } catch {
        return void socket.destroy();
      }
      if ('out' in frame) write(io.stdout, frame.out);
      else if ('err' in frame) write(io.stderr, frame.err);
      else exitCode = frame.exit;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (exitCode === undefined) io.stderr.write('error: the service stopped before the command finished; see its log for what was done\n');
      resolve(exitCode ?? EXIT.failure);
    });
    socket.write(frameLine({ args, stdout: traitsOf(io.stdout), stderr: traitsOf(io.stderr) }));
  });
}

/** The command run by the service that holds its DATA_DIR, if one answers there; undefined when the CLI must run it itself. */
export async function forwardToService(args: string[], io: CliIo): Promise<number | undefined> {
  const dataDir = embeddedDataDir(io.env);
  const socket = dataDir === undefined ? undefined : await connectToService(dataDir);
  return socket && runOnService(socket, args, io);
}
