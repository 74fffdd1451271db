// Preloaded (--import) into every test file's process by `npm run test:run`. Each test file
// runs in a child that streams its results to the runner over its stdout, a non-blocking
// pipe. Under --test-force-exit the child exits as soon as its results are handed to that
// pipe, and on Linux whatever the pipe had not yet taken is lost: the runner then counts
// fewer tests and still exits 0 (nodejs/node issue 64833). A blocking stdout hands every
// result over before the exit. Only test files' own processes: servers they spawn may share
// the environment, and their stdout must stay as Node makes it.
import process from 'node:process';

if (process.env.NODE_TEST_CONTEXT?.startsWith('child') && /\.test\.[cm]?[jt]s$/.test(process.argv[1] ?? '')) {
  process.stdout._handle?.setBlocking?.(true);
}
