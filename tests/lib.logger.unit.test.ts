import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, stdoutLogDestination } from '../server/src/lib/logger.ts';
import { eventually } from './helpers/wait.ts';

// The service's stdout (server/src/lib/logger.ts): written off the event loop, so a reader
// that stops reading holds up nothing, and with a bound on what waits, so that it does not
// hold lines in memory until the process runs out of it either.

const test = suite('lib/logger: stdout written off the event loop, with a bound on what waits');

test('a stdout nobody reads: lines wait up to the bound, later ones are dropped and counted, and writing goes on once it is read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-log-'));
  const fifo = join(dir, 'stdout');
  execFileSync('mkfifo', [fifo]);
  // Read and write, so that opening does not wait for a reader: nothing reads it until later.
  const fd = openSync(fifo, constants.O_RDWR);
  const maxBytes = 64 * 1024;
  const destination = stdoutLogDestination({ fd, maxBytes });
  let dropped = 0;
  destination.on('drop', () => dropped++);
  const logger = createLogger('info', destination);
  try {
    const filler = 'x'.repeat(1000);
    for (let n = 0; n < 1000; n++) logger.info({ n, filler }, 'line');
    // 1 MB of lines: what the FIFO holds (64 KiB) and the bound (64 KiB) take about 130 of them.
    assert.ok(dropped >= 800, `dropped ${dropped} of 1000`);
    assert.ok(dropped < 1000, 'the first lines were kept');

    // Once the FIFO is read, what waited is written, and new lines go out again: one is
    // logged at each look until it arrives (while the bound is still full it is dropped).
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const read = Buffer.alloc(1 << 20);
    let text = '';
    try {
      await eventually(
        'the waiting lines, then a new one, to be written',
        () => {
          if (text.includes('after the reader came back')) return true;
          logger.info('after the reader came back');
          text += read.subarray(0, readSync(reader, read, 0, read.length, null)).toString('utf8');
          return false;
        },
      );
    } finally {
      closeSync(reader);
    }
    assert.match(text, /"n":0,/);
  } finally {
    // The destination closes the descriptor it was given, later: closing it here too would
    // fail its own close with EBADF, an error event that ends the process.
    const closed = new Promise((resolve) => destination.once('close', resolve));
    destination.destroy();
    await closed;
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
