/**
 * A tool call whose POST stream is cut at seeded event counts (FIN and RST in turn), resumed
 * with the last ID seen after each cut until the call's answer arrives: what a client of the
 * resume protocol does, with faults where a seed puts them.
 */
import assert from 'node:assert/strict';
import type { EventSourceMessage } from 'eventsource-parser';
import { messages, rpc, send, sessionHeaders, type Handshake } from './sse-client.js';
import { prng } from './prng.js';

/** Cut points: `count` distinct event counts in [1, max], sorted, from `seed`. */
export function cutPoints(seed: number, count: number, max: number): number[] {
  const rand = prng(seed);
  const points = new Set<number>();
  while (points.size < count) points.add(1 + Math.floor(rand() * max));
  return [...points].sort((a, b) => a - b);
}

/** Calls `tool` at `url`, cutting at every point in `cuts`; returns every event received and how many cuts landed. */
export async function callThroughCuts(url: URL, h: Handshake, tool: string, args: Record<string, unknown>, cuts: number[], seed: number) {
  const all: EventSourceMessage[] = [];
  const request = rpc('tools/call', { name: tool, arguments: args });
  let cutIndex = 0;
  const cutAt = (): ((e: EventSourceMessage, got: EventSourceMessage[]) => boolean) | undefined => {
    const target = cuts[cutIndex];
    if (target === undefined) return undefined;
    const already = all.length;
    return (_e, got) => already + got.length >= target;
  };
  const mode = (): 'fin' | 'rst' => (cutIndex % 2 === 0 ? 'fin' : 'rst');
  let response = await send(url, { body: request, headers: sessionHeaders(h), cutWhen: cutAt(), cut: mode() });
  assert.equal(response.status, 200, response.text);
  all.push(...response.events);
  const answered = (): boolean => messages(all).some((m) => m.id === request.id);
  for (let round = 0; !answered(); round++) {
    assert.ok(round < cuts.length + 3, `seed ${seed}: no final response after ${round} resumes`);
    cutIndex++;
    const last = all.at(-1)?.id;
    assert.ok(last, `seed ${seed}: nothing to resume from`);
    response = await send(url, { headers: sessionHeaders(h, { 'last-event-id': last }), cutWhen: cutAt(), cut: mode() });
    assert.equal(response.status, 200, `seed ${seed}: resume refused: ${response.text}`);
    all.push(...response.events);
  }
  return { all, request, cutsLanded: cutIndex };
}
