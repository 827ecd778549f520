// A warm test process: tests/run.mjs starts a few of these and hands each one test file at a
// time over IPC. Loading the server's modules (Sequelize, trpc-to-openapi, WebAuthn, …) costs
// about two seconds per process; a warm process pays it once for all the files it runs. Each
// file still gets its own service, database and mail server from its own hooks, and uvu runs
// its tests exactly as `node --import tsx <file>` would (the runner starts a fresh process for
// a file whose process crashed or hung).
import { pathToFileURL } from 'node:url';

// uvu queues suites instead of running them when this is set before it loads.
globalThis.UVU_DEFER = 1;
const { exec } = await import('uvu');

const streams = [process.stdout, process.stderr];
const originalWrites = streams.map((stream) => stream.write);

/** Runs `fn` with everything written to stdout and stderr captured as text. */
async function capturing(fn) {
  let text = '';
  for (const stream of streams) {
    stream.write = (chunk, encoding, callback) => {
      text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      const done = typeof encoding === 'function' ? encoding : callback;
      if (done) queueMicrotask(() => done());
      return true;
    };
  }
  try {
    await fn();
  } catch (error) {
    text += `\n${error?.stack ?? error}\n`;
    process.exitCode = 1;
  } finally {
    streams.forEach((stream, i) => (stream.write = originalWrites[i]));
  }
  return text;
}

process.on('message', async ({ file, stop }) => {
  // Ends as a process of one file would, so that files' 'exit' handlers run.
  if (stop) process.exit();
  // What a test file reads as "its own file" (tests/helpers/answers.ts names recordings by it).
  process.argv[1] = file;
  globalThis.UVU_QUEUE = [[null]];
  process.exitCode = 0;
  const text = await capturing(async () => {
    await import(pathToFileURL(file).href);
    await exec();
  });
  process.send({ file, text, code: process.exitCode ?? 0 });
});

process.send({ ready: true });
