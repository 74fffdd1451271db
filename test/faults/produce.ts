/** The wire layout of the harness's `produce` tool, shared by the server process and the scenarios. */

/** The marker that starts event `seq` of `produce` run `run`: unique on the wire. */
export function marker(run: string, seq: number): string {
  return `<<${run}:${seq}>>`;
}

/** What follows the marker in each event's text: 4-, 3- and 2-byte UTF-8 sequences. */
export const AFTER_MARKER = '𝄞€é';
