#!/usr/bin/env node
/** The `mcp-continuity` command. */
import { SERVE_USAGE, serve } from './serve.js';
import { UsageError } from './usage.js';

const USAGE = `Usage: mcp-continuity <command> [options]

Commands:
  serve    run the example MCP server on a continuity-proving endpoint

Run "mcp-continuity <command> --help" for a command's options.`;

const commands: Record<string, { run: (argv: string[]) => Promise<void>; usage: string }> = {
  serve: { run: serve, usage: SERVE_USAGE },
};

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`Unknown command ${JSON.stringify(name)}\n\n${USAGE}`);
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(command.usage);
    return;
  }
  await command.run(rest);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
    console.error(`mcp-continuity: ${error.message}`);
    process.exitCode = 2;
    return;
  }
  console.error(error);
  process.exitCode = 1;
});
