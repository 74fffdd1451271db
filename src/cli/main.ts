#!/usr/bin/env node
/**
 * The `mcp-continuity` command. Commands are imported on demand, so `--help`, `--version`
 * and `probe` never load the SDK's server side or SQLite.
 */
import { redactUrl } from '../store/redis/url.js';
import { CHAOS_USAGE, DEMO_USAGE, MAIN_USAGE, PROBE_USAGE, SERVE_USAGE, StartupError, UsageError, version } from './usage.js';

interface Command {
  usage: string;
  /** Runs the command; resolves to its exit code (a server resolves once it is listening). */
  run: (argv: string[]) => Promise<number | void>;
}

const commands: Record<string, Command> = {
  serve: {
    usage: SERVE_USAGE,
    run: async (argv) => {
      // A bad option, a busy port or an unusable SQLite path fails before the server side (the
      // SDK, the stores) loads: in well under a second.
      await (await import('./preflight.js')).preflight((await import('./serve-options.js')).parseServeOptions(argv));
      return (await import('./serve.js')).serve(argv);
    },
  },
  probe: { usage: PROBE_USAGE, run: async (argv) => (await import('./probe/command.js')).probe(argv) },
  chaos: { usage: CHAOS_USAGE, run: async (argv) => (await import('./chaos.js')).chaos(argv) },
  demo: { usage: DEMO_USAGE, run: async (argv) => (await import('./demo/command.js')).demo(argv) },
};

async function main(argv: string[]): Promise<number | void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(MAIN_USAGE);
    return 0;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    console.log(version());
    return 0;
  }
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.usage);
    return 0;
  }
  return command.run(rest);
}

/** Node's parseArgs errors, reworded as one line. */
function argsMessage(error: Error & { code?: unknown }): string | undefined {
  if (typeof error.code !== 'string' || !error.code.startsWith('ERR_PARSE_ARGS')) return undefined;
  const ambiguous = /^Option '(--[\w-]+)' argument is ambiguous/.exec(error.message);
  // Node's message for `--drain-ms -5` spans three lines and suggests nothing about the value itself.
  if (ambiguous) return `${ambiguous[1]} needs a value; a value starting with - goes as ${ambiguous[1]}=VALUE`;
  return error.message.replace(/\. To specify a positional argument starting with a '-'.*$/s, '').replace(/^Unknown option/, 'unknown option');
}

main(process.argv.slice(2)).then(
  (code) => {
    // One-shot commands end here, even if a client library left a reconnect timer behind,
    // but only once stdout and stderr have drained: a pipe takes 64 KiB at a time, and
    // exiting earlier would cut a long `--json` report short.
    if (typeof code !== 'number') return;
    process.exitCode = code;
    process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
  },
  (error: unknown) => {
    fail(error);
    // A command that failed exits now, once its message is out, even if what it had opened
    // before failing (a listening socket, a store's connection, a timer) would keep it alive.
    process.stdout.write('', () => process.stderr.write('', () => process.exit(process.exitCode ?? 1)));
  },
);

function fail(error: unknown): void {
  const command = process.argv[2];
  const hint = command !== undefined && Object.hasOwn(commands, command) ? `mcp-continuity ${command} --help` : 'mcp-continuity --help';
  if (error instanceof UsageError) {
    console.error(redactUrl(`mcp-continuity: ${error.message} (see ${hint})`));
    process.exitCode = 2;
    return;
  }
  const parse = error instanceof Error ? argsMessage(error) : undefined;
  if (parse !== undefined) {
    console.error(redactUrl(`mcp-continuity: ${parse} (see ${hint})`));
    process.exitCode = 2;
    return;
  }
  // Startup failures are one line that names the fix; anything else too, unless asked for the stack.
  const message = error instanceof Error ? error.message : String(error);
  // A store URL's password never reaches the terminal (or the logs it is piped to).
  console.error(redactUrl(`mcp-continuity: ${message}`));
  if (!(error instanceof StartupError) && process.env['MCP_CONTINUITY_DEBUG']) console.error(redactUrl(String((error as Error).stack ?? error)));
  process.exitCode = 1;
}
