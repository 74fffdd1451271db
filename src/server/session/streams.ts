/**
 * A session's streams: the standalone stream, the request streams still open (completed
 * ones live only in the log), their names, and the readers opened on them.
 */
import type { ResolvedLimits } from '../stream/limits.js';
import { OutboundStream } from '../stream/outbound-stream.js';
import type { StreamHost } from '../stream/host.js';
import { readerBounds } from '../stream/bounded-writer.js';
import { defaultProcess } from '../stream/process.js';
import { SessionReaders, type SseSink } from '../stream/sse-sink.js';
import { STANDALONE_STREAM as STANDALONE, StreamNames } from '../stream/names.js';
import type { StreamHead, StreamInfo } from '../../store/types.js';

const standaloneInfo = (): StreamInfo => ({ kind: 'standalone', requestIds: [] });

export class SessionStreams {
  /** Set by {@link open} or {@link restoreStandalone} before the session takes any request. */
  standalone!: OutboundStream;
  readonly names: StreamNames;
  readonly #open = new Map<string, OutboundStream>();
  readonly #readers = new SessionReaders();
  readonly #host: StreamHost;
  readonly #limits: ResolvedLimits;
  readonly #keepAliveMs: number;

  constructor(host: StreamHost, limits: ResolvedLimits, keepAliveMs: number) {
    this.#host = host;
    this.#limits = limits;
    this.#keepAliveMs = keepAliveMs;
    this.names = new StreamNames(limits.maxStreamsPerSession);
  }

  /** Request streams still open. */
  get openCount(): number {
    return this.#open.size;
  }

  /** Is any reader attached to a stream of the session? */
  get hasReader(): boolean {
    // Undefined until the session started: the sweep may look at a session being created.
    if (this.standalone?.hasReader) return true;
    for (const s of this.#open.values()) if (s.hasReader) return true;
    return false;
  }

  /** No open request stream still owes an answer. */
  get answeredAll(): boolean {
    for (const s of this.#open.values()) if (s.openRequests.size > 0) return false;
    return true;
  }

  /** The live stream of `name` (the standalone one included), if open. */
  live(name: string): OutboundStream | undefined {
    return name === STANDALONE ? this.standalone : this.#open.get(name);
  }

  /** Opens a fresh standalone stream. */
  async openStandalone(): Promise<void> {
    this.standalone = await OutboundStream.open(this.#host, STANDALONE, standaloneInfo());
  }

  /** Continues the standalone stream at `head` (a rebuild), or opens it if it was never written. */
  async restoreStandalone(head: StreamHead | undefined): Promise<void> {
    if (head) this.standalone = OutboundStream.restore(this.#host, STANDALONE, head, standaloneInfo());
    else await this.openStandalone();
  }

  /** Opens the next request stream for the requests `keys` (not yet registered: see {@link add}). */
  openRequest(keys: readonly string[]): Promise<OutboundStream> {
    return OutboundStream.open(this.#host, this.names.next(), { kind: 'request', requestIds: [...keys] });
  }

  /** Continues a request stream a rebuilt session found open in the log. */
  restoreRequest(name: string, head: StreamHead, unanswered: string[]): OutboundStream {
    const stream = OutboundStream.restore(this.#host, name, head, { kind: 'request', requestIds: unanswered });
    this.add(stream);
    return stream;
  }

  add(stream: OutboundStream): void {
    this.#open.set(stream.name, stream);
  }

  /** A stream completed: it leaves the open set; returns a completed stream retention now drops, if any. */
  completed(stream: OutboundStream): string | undefined {
    this.#open.delete(stream.name);
    return this.names.completed(stream.name);
  }

  /** Readers detached from every stream (the session ends). */
  detachAll(): void {
    this.standalone?.detach();
    for (const s of this.#open.values()) s.detach();
    this.#open.clear();
  }

  /** The log is being reset: no write of these streams matters any more. */
  retireAll(): void {
    this.standalone.retire();
    for (const s of this.#open.values()) s.retire();
  }

  /**
   * After a reset of the log ({@link retireAll} first): every stream is replaced by a fresh
   * one, the requests still open on each moving to its successor (`moved` is told of each).
   */
  async renew(moved: (keys: readonly string[], stream: OutboundStream) => void): Promise<void> {
    this.names.forgetCompleted();
    await this.openStandalone();
    const open = [...this.#open.values()];
    this.#open.clear();
    for (const old of open) {
      const keys = [...old.openRequests];
      const stream = await this.openRequest(keys);
      this.add(stream);
      moved(keys, stream);
    }
  }

  /** A new reader's sink; a GET reader (`counted`) is bounded by maxReadersPerSession. */
  newSink({ counted }: { counted: boolean }): SseSink {
    const l = this.#limits;
    return this.#readers.open(
      { ...readerBounds(l, this.#host.process ?? defaultProcess), keepAliveMs: this.#keepAliveMs },
      counted ? l.maxReadersPerSession : undefined,
    );
  }
}
