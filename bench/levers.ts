/**
 * The section of docs/performance.md on the performance levers: what each was measured at, A/B in
 * one run, and what was decided. Hand-written from side runs (bench/hash.ts, bench/perf-ab.ts,
 * CPU profiles of bench/cell.ts), not from the results file, so `bench/docs.ts` keeps it as is.
 */
export const LEVERS = `## The levers, measured

Each lever was measured before anything was decided; the commands are in the rows. The
machine was shared with five other engineers' builds and tests throughout (load average
12–25 on 2 cores), so every number below comes with its spread and, for the A/B, an A-vs-A
control: where the control moves as much as B does, the run shows nothing either way.

### 1. The content hash: SHA-256 stays

\`node --import tsx bench/hash.ts 9\`: one process, 9 interleaved rounds, per hash of one
buffer, median µs (lowest–highest round), Node 20.20, load average 13:

| hash (or operation) | runs as | 4 KiB | 64 KiB |
|---|---|---|---|
| SHA-256 node:crypto \`hash()\` (what the server and the Node client use) | native | 3.07 (2.70–6.03) | 45.1 (40.5–80.7) |
| SHA-256 node:crypto \`hash()\`, A-vs-A control | native | 3.10 (2.74–17.81) | 46.6 (40.0–139.5) |
| SHA-256 node:crypto \`createHash\` | native | 4.93 (3.90–15.16) | 56.8 (42.1–157.8) |
| SHA-256 WebCrypto \`digest\` (async) | native | 210 (32–1095) | 134 (75–456) |
| SHA-256 @noble/hashes (browsers and Workers until the bundle trim; now src/platform/sha256.ts, about twice as fast by the bundle commit's own measurement) | JS | 35.4 (26.4–235.1) | 453 (400–1021) |
| BLAKE3 @noble/hashes | JS | 117 (81–260) | 1650 (1370–4283) |
| XXH3-128 @node-rs/xxhash | native | 2.89 (2.09–10.03) | 44.9 (29.9–62.0) |
| XXH128 hash-wasm | WebAssembly | 1.21 (0.74–1.99) | 12.9 (8.6–42.1) |
| BLAKE3 hash-wasm | WebAssembly | 8.33 (4.76–19.08) | 128 (72–182) |
| SHA-256 hash-wasm | WebAssembly | 19.0 (10.5–30.6) | 284 (156–538) |
| XXH64 xxhash-wasm (64 bits: too short for the chain) | WebAssembly | 0.51 (0.36–2.99) | 6.47 (4.53–8.48) |

Decision: **keep SHA-256**, named as it is today (the chain values of every log already
written, in memory, Redis and SQLite files on disk, are SHA-256, so nothing needs
migrating or a second verifier). Why:

- Natively, nothing 128-bit is cheaper on Node: XXH3-128 through N-API costs what SHA-256
  costs at 64 KiB (the call and its \`BigInt\` result eat the difference). Only XXH128 as
  WebAssembly is clearly cheaper, by about 32 µs per 64 KiB event on the server and again
  in the client: about 5% of our server CPU per 64 KiB event on memory (about 650 µs) and
  3% on SQLite (about 1,100 µs), against a gap of about 300 µs per event to the 1.3×
  goal. It does not reach the goal, and the rest of the gap is serialization and I/O
  (below).
- It would not run everywhere the client runs: Cloudflare Workers' \`WebAssembly.instantiate()\`
  takes only modules compiled at deploy time, and hash-wasm and xxhash-wasm compile the bytes
  they embed at run time. The client there would need a JavaScript XXH3-128 (64-bit
  multiplies in 32-bit halves), and the JavaScript SHA-256 it has now already costs 35 µs
  per 4 KiB event.
- A change of algorithm has a price beyond the hash: a capability naming it, a client that
  verifies both across the upgrade of a server whose logs hold SHA-256 chains, and a
  refusal when it meets one it does not know. Worth paying for 30% of the server's time,
  not for 5%.

What was cut instead: copies and encodings around it. A payload of 512 characters and more
was already encoded once into a reused buffer for both its size check and its hash; the
stores encoded it a second time (the SQLite row, the memory store's off-heap copy). They now
copy those bytes when the buffer still holds the payload (\`encodedUtf8\`), and encode as
before when it does not. Per 64 KiB payload (same run of \`bench/hash.ts\`, load average 25):
an encode costs 5.4 µs for ASCII text (V8's one-byte fast path) and a copy 1.1 µs, so the
saving is a few µs per 64 KiB event, well under 1% of its cost; more for text past Latin-1,
which encodes far slower. The buffer holds the payload at the store for 100% of events
with one session on memory and 90% on SQLite, but only 16% at 64 KiB and 3% at 4 KiB with
32 sessions (counted in a side run): there another stream's payload has been encoded by
then.

### 2. SQLite with large payloads

- **Bytes, not text, since schema v3.** A batch is one row whose payloads are one BLOB of
  their UTF-8, cut apart again by the sizes column; now that UTF-8 is the hash's (above)
  when it is still at hand.
- **Page size: 4096 stays.** Raw better-sqlite3, one table like \`batches\`, WAL,
  \`synchronous = NORMAL\`, a retention delete per commit, 7 interleaved rounds, median µs per
  commit (lowest–highest): 64 KiB rows: 4096 B pages 1,330 (967–2,577), 8 KiB 1,218,
  16 KiB 1,067 (749–1,508), 32 KiB 987 (827–2,381), 64 KiB 1,232; 4 KiB rows: 4096 B 444
  (375–755), 8 KiB 570, 16 KiB 558, 32 KiB 612, 64 KiB 731. Larger pages save a fifth on the
  64 KiB commit and cost a quarter or more on the 4 KiB one, whose commits are far more
  common; the store's earlier measurement said the same. Existing files keep their page size
  either way (it is fixed when a file is created).
- **Where SQLite's time goes at 64 KiB** (CPU profile of \`bench/cell.ts sqlite 65536 1 2000\`
  at load 12): the commit (WAL write) about 470 µs and the row insert about 290 µs per event,
  out of about 1,100–1,400 µs; hashing about 130 µs (inflated by the load: 45 µs in the
  microbench), serializing about 210 µs. That is bytes through
  the WAL, which the checkpoint then copies into the database again. Keeping large payloads
  out of the B-tree and the WAL (a payload file per stream, the row holding its offset) is
  the lever left for the SQLite goal at 64 KiB; it is not done: it changes what a crash can
  leave behind and needs its own fault runs.

### 3. Many sessions

CPU profile of \`bench/cell.ts sdk,memory 4096 1000 20000\`: with 1,000 sessions each call
carries 20 events, so per-request work weighs as much as per-event work. Ours pays, per
request, a web \`Request\` built from Node's (an \`AbortController\`, whose signal Node 20 makes
transferable at about 1 µs each, and a web stream for the body), a \`ReadableStream\` per SSE
response that the Node adapter then bypasses, and the endpoint's telemetry spans; per event,
an off-heap copy of each payload of 1,024 characters and more (1% of the busy time), and
garbage collection (7.0% of the samples, the SDK's process 5.2%). The endpoint's turn
scheduling showed no cost of its own (its time is the flushes it runs). Nothing here was
clearly wasteful enough to change beside the concurrent refactoring of \`src/server/stream\`
and the Node adapter; the next step is a Node fast path that hands the adapter's body and
signal to the endpoint without a web \`Request\`.

### 4. Where a large event's extra cost goes: memory the log retains

Measured on a quiet machine (load average 1–2; the bench itself on both cores), with each
round also reporting the server's kernel CPU and its minor page faults per event
(\`bench/cell.ts\`, 5 rounds, medians):

| command | SDK v1: events/s · CPU µs/event (kernel · faults) | memory store: events/s · CPU µs/event (kernel · faults) |
|---|---|---|
| \`bench/cell.ts sdk,memory 65536 1 2000 5\`, first run | 3,482 · 287 (38 · 0.5) | 1,825 · 627 (157 · 5.6) |
| the same, second run | 3,461 · 290 (96 · 4.6) | 2,532 · 427 (94 · 5.3) |
| \`bench/cell.ts sdk,memory 65536 32 2000 5\` (default budget, 512 MiB) | 2,954 · 369 (127 · 7.0) | 1,940 · 550 (130 · 16.6) |
| the same with \`BENCH_MEMORY_MAX_MIB=32\` | 2,842 · 371 (131 · 7.0) | 2,537 · 436 (48 · 1.2) |
| \`bench/cell.ts sdk,memory 4096 32 20000 5\` (default budget) | 16,610 · 74 (14 · 0.8) | 18,500 · 59 (14 · 1.1) |
| the same with \`BENCH_MEMORY_MAX_MIB=32\` | 19,817 · 63 (14 · 0.8) | 26,146 · 42 (5 · 0.1) |

- **With 32 sessions, every retained event is memory the process has never touched.** A
  64 KiB event is 16 pages; the memory store faulted 16.6 pages per event. Per-stream
  retention (16 MiB) never trims a stream of 62 events per round, so the store grows
  towards its process-wide budget (512 MiB) for the whole run, and each event's off-heap
  copy is fresh memory the kernel must clear and map. On this virtual machine a fault
  costs several microseconds. A CPU profile of the same cell showed it as the off-heap
  copy's allocation (23.5% of the samples, self time, against 0.3% with one session). With
  a 32 MiB budget the store reuses memory: 1.2 faults per event, 115 µs less CPU per
  event, 31% more events/s. At 4 KiB, 41% more.
- **With one session the store churns instead.** Its stream keeps its last 16 MiB and
  drops older events, whose buffers the garbage collector frees in bulk. The allocator
  then gives some memory back to the OS and the next events fault it in again: about
  5 faults per 64 KiB event. Two runs of the same cell differ by 30% here (627 and
  427 µs), so this cell's ratio moves with the machine more than any code change below.
- **Tried: payloads on the heap** (\`OFF_HEAP_FROM\` raised past 64 KiB, side run, not
  committed). Worse: 651 µs (16.3 faults) against 389 µs (2.9) with one session, 692
  against 623 µs with 32; the heap grows the same way and the collector copies as well.
- **Tried: glibc's allocator kept from trimming** (\`MALLOC_TRIM_THRESHOLD_=1073741824
  MALLOC_TOP_PAD_=67108864\`, one session, 64 KiB): the SDK's faults fell from 4.6 to 1.1
  per event, ours only from 5.3 to 3.9, and our CPU per event did not move (427 and
  444 µs). Not recommended.
- **Tried: larger batches per stream and turn** (\`TURN_BYTES\` 128 KiB instead of 32 KiB,
  side run, two interleaved pairs of \`bench/cell.ts sqlite,memory 4096 1 20000 3\`): fewer
  SQLite commits per event, but slower on both stores. SQLite 12,675 and 10,771 events/s
  against 15,880 and 13,320; memory 16,710 and 14,473 against 21,582 and 22,213. It stays
  32 KiB.
- **Tried and reverted: each large payload's UTF-8 encoded once and carried with its event**
  (the memory store keeping those bytes, the SSE sink writing them as they are instead of a
  string that Node flattens and encodes again). A/B in one run against main,
  \`node --import tsx bench/perf-ab.ts <main> <change> 5
  memory:100:1,memory:4096:1,memory:65536:1,sqlite:4096:1,sqlite:65536:1,memory:4096:32,memory:65536:32\`:

| cell | A events/s | B events/s | A′ (control) events/s | B vs A | A′ vs A | A CPU µs/event | B CPU µs/event | A′ CPU µs/event | B vs A | A′ vs A |
|---|---|---|---|---|---|---|---|---|---|---|
| memory 100 B × 1 | 129123 (66252–178338) | 135824 (74347–155228) | 128822 (64335–150673) | +5.2% | -0.2% | 8.7 (6.0–17.0) | 7.7 (6.4–16.6) | 7.3 (6.7–17.3) | -10.9% | -16.1% |
| memory 4096 B × 1 | 25809 (13518–29522) | 25142 (15772–27255) | 24976 (17532–28957) | -2.6% | -3.2% | 41.8 (39.1–83.1) | 43.2 (41.5–77.9) | 40.8 (35.6–69.9) | +3.3% | -2.4% |
| memory 65536 B × 1 | 2201 (2029–2811) | 2477 (1781–2985) | 2350 (2097–2465) | +12.5% | +6.8% | 495.2 (344.8–557.9) | 463.2 (334.7–625.9) | 463.7 (416.9–561.2) | -6.5% | -6.4% |
| sqlite 4096 B × 1 | 6163 (4563–10254) | 7350 (4330–8178) | 5711 (5394–9511) | +19.3% | -7.3% | 94.9 (73.4–114.0) | 101.8 (80.7–114.7) | 93.5 (74.7–112.5) | +7.3% | -1.5% |
| sqlite 65536 B × 1 | 961 (452–1353) | 1039 (347–1089) | 983 (591–1339) | +8.1% | +2.3% | 1023.9 (746.2–1230.3) | 961.4 (783.4–1410.0) | 971.7 (732.9–1019.0) | -6.1% | -5.1% |
| memory 4096 B × 32 | 17946 (13327–19347) | 15913 (12039–17187) | 18050 (12213–20163) | -11.3% | +0.6% | 63.5 (54.4–81.2) | 65.9 (62.3–90.2) | 64.3 (52.1–90.2) | +3.7% | +1.2% |
| memory 65536 B × 32 | 1492 (1238–2108) | 1401 (1114–2399) | 1577 (1414–2081) | -6.1% | +5.7% | 713.0 (482.6–866.9) | 788.6 (437.1–895.2) | 699.1 (466.2–729.9) | +10.6% | -2.0% |

  No cell moved beyond its A-vs-A control (64 KiB, one session: CPU per event -6.5%, the
  control -6.4%), and at 32 sessions it may cost (4 KiB: -11% events/s, control +0.6%).
  The flatten and encode it saved are small beside the faults above. The commit and its
  revert are both in the history.

Decisions:
- **The default budget stays 512 MiB.** It is what a busy process keeps for clients to
  resume from, across all its streams. A log that holds the bytes pays for the memory
  once, as it grows. The SDK transport keeps nothing. The SDK with its example store keeps
  every message, but in this bench each message holds the same padding string, so that
  store retains almost nothing per event.
- **Where the resumption window can be shorter, a smaller \`maxTotalBytes\` is the lever**
  (\`memoryStore({ maxTotalBytes })\`), measured above: at 64 KiB with 32 sessions, 0.89×
  the SDK's events/s instead of 0.66×.
- The 64 KiB and many-session targets are not met (the targets table above). At
  64 KiB the SDK's own serialization already bounds every server on it (the protocol
  ceiling, under "Reading the numbers"). We add the SHA-256 of the payload, and the memory
  that keeps it resumable.

### A/B in one run

\`node --import tsx bench/perf-ab.ts <main> <this branch> 7\`: the bench servers of the commit
before these changes (A), with them (B), and A again (A′, the control), interleaved, 7 rounds
each, median (lowest–highest round):

| cell | A events/s | B events/s | A′ (control) events/s | B vs A | A′ vs A | A CPU µs/event | B CPU µs/event | A′ CPU µs/event | B vs A | A′ vs A |
|---|---|---|---|---|---|---|---|---|---|---|
| memory 65536 B × 1 | 308 (220–1128) | 443 (177–875) | 386 (259–749) | +44.0% | +25.4% | 843.0 (588.3–1268.5) | 752.1 (605.1–1094.8) | 736.3 (674.0–958.7) | -10.8% | -12.7% |
| sqlite 65536 B × 1 | 303 (189–532) | 204 (129–290) | 206 (171–354) | -32.7% | -32.1% | 1063.4 (884.5–1139.1) | 1124.7 (971.1–1485.8) | 1060.2 (891.0–1347.7) | +5.8% | -0.3% |
| memory 4096 B × 1 | 5122 (2815–15119) | 5537 (2463–13753) | 6600 (1569–10308) | +8.1% | +28.9% | 53.3 (47.6–113.9) | 57.6 (44.1–151.8) | 57.8 (45.4–122.7) | +7.9% | +8.4% |
| sqlite 4096 B × 1 | 6206 (3666–7617) | 6150 (5307–7748) | 7250 (5862–8960) | -0.9% | +16.8% | 69.3 (66.4–112.9) | 69.8 (66.4–104.6) | 67.3 (59.6–99.9) | +0.7% | -3.0% |
| memory 65536 B × 32 | 839 (521–1385) | 686 (442–1661) | 949 (448–1693) | -18.2% | +13.1% | 791.5 (465.6–983.1) | 832.9 (482.1–1069.5) | 730.4 (426.4–992.5) | +5.2% | -7.7% |

A second run of the two memory 64 KiB cells, 9 rounds each:

| cell | A events/s | B events/s | A′ (control) events/s | B vs A | A′ vs A | A CPU µs/event | B CPU µs/event | A′ CPU µs/event | B vs A | A′ vs A |
|---|---|---|---|---|---|---|---|---|---|---|
| memory 65536 B × 1 | 501 (274–1416) | 777 (257–1845) | 717 (396–931) | +55.2% | +43.2% | 733.0 (446.8–1014.9) | 568.5 (380.1–915.3) | 599.1 (543.8–703.4) | -22.4% | -18.3% |
| memory 65536 B × 32 | 329 (69–672) | 254 (140–1317) | 370 (59–755) | -22.7% | +12.6% | 742.5 (525.6–1487.6) | 760.9 (544.4–1209.6) | 727.2 (459.7–1480.4) | +2.5% | -2.1% |

At this load the control moved as much as B did (up to ±30% in events/s), so this run
can neither show nor rule out the few-µs effect of the copy; the CPU per event, the steadier
of the two measures, stays within the control's spread in every cell.

### The Node adapter's abort signal, and the code against commit 3884320

The web \`Request\` the Node adapter builds no longer carries an abort signal of the
connection: nothing in the endpoint read it, and each request paid an \`AbortController\`, a
\`close\` listener and undici's bookkeeping for the signal it links. Measured together with
the other changes since that commit (the \`process\` option, the one-port SSE sink, the client split) on
a quiet machine (load average 0.0 at the start), \`node --import tsx bench/perf-ab.ts
<checkout of 3884320> <checkout with the changes> 5 memory:100:1,memory:4096:1,memory:65536:1,sqlite:4096:1,memory:4096:1000\`:

| cell | A events/s | B events/s | A′ (control) events/s | B vs A | A′ vs A | A CPU µs/event | B CPU µs/event | A′ CPU µs/event | B vs A | A′ vs A |
|---|---|---|---|---|---|---|---|---|---|---|
| memory 100 B × 1 | 92011 (54999–111063) | 101988 (68026–111642) | 98868 (80653–145005) | +10.8% | +7.5% | 11.6 (10.7–23.5) | 11.6 (10.4–19.4) | 11.5 (8.9–18.9) | +0.3% | -0.7% |
| memory 4096 B × 1 | 23964 (12094–24694) | 24760 (12249–26496) | 20013 (12747–25903) | +3.3% | -16.5% | 47.5 (41.8–103.1) | 43.5 (40.9–101.3) | 53.3 (38.5–99.0) | -8.4% | +12.2% |
| memory 65536 B × 1 | 2415 (1759–2564) | 2600 (2160–3173) | 2541 (1958–3078) | +7.7% | +5.2% | 450.1 (403.4–667.8) | 413.5 (348.4–565.0) | 452.0 (340.9–603.2) | -8.1% | +0.4% |
| sqlite 4096 B × 1 | 15789 (14173–18290) | 17344 (13802–18367) | 16267 (13588–17480) | +9.8% | +3.0% | 67.0 (57.3–86.8) | 61.4 (57.5–88.4) | 59.9 (59.6–89.5) | -8.3% | -10.7% |
| memory 4096 B × 1000 | 8144 (6762–8301) | 9198 (8391–9661) | 8686 (7369–10504) | +12.9% | +6.7% | 135.3 (123.7–161.8) | 114.6 (106.0–129.6) | 120.4 (96.4–143.9) | -15.3% | -11.0% |

B is at or above A in every cell, and within the control's spread in all but the CPU per
event at 1,000 sessions (-15% against the control's -11%): no regression, and the signal's
saving is too small to separate from the noise of five rounds.
`;
