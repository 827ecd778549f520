import { EXIT } from './output.ts';
import { runAdminCommand } from './program.ts';

// `npm run admin -- <command>`: the operator's commands (program.ts) as a process, on its
// stdout, stderr and environment.

// `… | head` closes stdout early: the reader has all it wanted, which is no reason for a stack.
// Output is printed after the work is done and the database closed, so nothing is cut short.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
  throw error;
});

process.exitCode = await runAdminCommand(process.argv.slice(2));
// Everything is closed by now; a timer a library left behind must not keep an operator waiting.
setTimeout(() => process.exit(), 2000).unref();
