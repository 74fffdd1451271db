/** `--restart-cmd`: run it, then wait until the server answers HTTP again. */
import { exec } from 'node:child_process';
import type { Target } from './session.js';
import { ContinuityError } from '../../protocol/errors.js';

/** Runs `command` in a shell; resolves when it exits 0. */
function runShell(command: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    exec(command, { timeout: timeoutMs }, (error, _stdout, stderr) => {
      if (error)
        reject(
          new ContinuityError('restart-failed', `--restart-cmd failed: ${error.message.split('\n')[0]}${stderr ? `: ${stderr.trim().slice(0, 200)}` : ''}`),
        );
      else resolve();
    });
  });
}

/** Waits until `url` answers HTTP at all (any status). */
async function untilUp(url: URL, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fetch(url, { method: 'GET', signal: AbortSignal.timeout(1000) }).then((r) => r.body?.cancel());
      return;
    } catch {
      if (Date.now() > deadline) throw new ContinuityError('restart-failed', `the server did not come back within ${timeoutMs} ms of --restart-cmd`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Restarts the server with `command` and waits until `target.url` answers again. */
export async function restartServer(target: Target, command: string): Promise<void> {
  await runShell(command, target.timeoutMs * 3);
  await untilUp(target.url, target.timeoutMs * 3);
}
