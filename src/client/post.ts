/**
 * The POST path: sends a message (riding through a deploy window), classifies the answer
 * (./post-answer.ts) and acts on the verdict: recover and send again when the session is
 * gone, fail typed when refused, fail with the session when its log was reset, else read
 * the answer. The transport provides the session and the streams through {@link PostHost}.
 */
import { ContinuityError } from '../protocol/errors.js';
import { Header } from '../protocol/headers.js';
import type { JsonRpcMessage, JsonRpcRequest } from '../protocol/jsonrpc.js';
import { linkSignal } from './abort.js';
import type { ResolvedReconnect } from './backoff.js';
import { corsRefusal } from './cors.js';
import { toDivergenceError } from './errors.js';
import { GiveUps, type RequestAttempts } from './give-up.js';
import { InFlightPosts, type Posting } from './in-flight.js';
import { OutageBudget } from './outage-budget.js';
import { classifyPost, jsonAnswer, needsRejectionText, notAnAnswer, type PostVerdict } from './post-answer.js';
import { goneError, refusalError } from './refusal.js';
import { rideThrough, type Outage } from './ride-through.js';
import type { SessionHandle } from './session.js';

export interface PostHost {
  readonly url: URL;
  readonly reconnect: ResolvedReconnect;
  readonly outage: Outage;
  /** Aborted when the transport closes. */
  readonly closing: AbortSignal;
  fetch(url: URL, init: RequestInit): Promise<Response>;
  headers(extra: Record<string, string>): Headers;
  closed(): boolean;
  session(): SessionHandle;
  swap(change: Partial<SessionHandle>): void;
  /** Recovers from the loss of `session` (shared with any recovery under way). */
  recover(error: ContinuityError, session: string | undefined): Promise<void>;
  /** Fails `request` with every other request of `session`, and recovers. */
  failWithSession(request: JsonRpcRequest | undefined, error: ContinuityError, session: string | undefined): Promise<void>;
  /** Follows the SSE stream that answers `request`. */
  follow(request: JsonRpcRequest | undefined, response: Response): Promise<void>;
  deliver(message: JsonRpcMessage): void;
  /** `notifications/initialized` was accepted: the session is open. */
  initialized(): void;
  report(error: Error): void;
}

export class Poster {
  /** Requests whose POST has not been answered with headers yet (key → id). */
  readonly posting = new InFlightPosts();
  /** Requests being sent, so that the application's cancellation stops their attempts (./give-up.ts). */
  readonly giveUps: GiveUps;
  readonly #host: PostHost;

  constructor(host: PostHost) {
    this.#host = host;
    this.giveUps = new GiveUps(host.reconnect.maxOutageMs, (error) => host.report(error));
  }

  /** POSTs `message`; `attempts` is the request's, undefined for a notification or a response. */
  async post(message: JsonRpcMessage, mayRecover: boolean, attempts?: RequestAttempts): Promise<void> {
    const session = this.#host.session().id;
    const posting = this.posting.begin(message);
    // One listener on the closing signal per POST, released once its answer is read.
    const link = linkSignal(this.#host.closing);
    let handedOff = false;
    try {
      const response = await this.#send(message, posting, link.signal, attempts);
      if (response) handedOff = await this.#act(message, mayRecover, session, response, link.release, attempts);
    } finally {
      if (!handedOff) link.release();
    }
  }

  /**
   * Sends the POST, riding through a deploy window; undefined when a recovery already
   * answered the request (the SDK has its answer: whatever comes now is not a second one).
   */
  async #send(
    message: JsonRpcMessage,
    posting: Posting | undefined,
    signal: AbortSignal,
    attempts: RequestAttempts | undefined,
  ): Promise<Response | undefined> {
    const h = this.#host;
    const ours = (): boolean => posting === undefined || this.posting.owns(posting);
    let response: Response;
    let owned = true;
    try {
      // Sent again only while it provably never reached a server, or was refused unaccepted (./ride-through.ts).
      response = await rideThrough(
        () =>
          h.fetch(h.url, {
            method: 'POST',
            headers: h.headers({ [Header.Accept]: 'application/json, text/event-stream', [Header.ContentType]: 'application/json' }),
            body: JSON.stringify(message),
            // Not the session's signal: a POST outlives a recovery that finds the session gone,
            // so that its own 404 can tell it ran nowhere and it may be sent again.
            signal,
          }),
        {
          reconnect: h.reconnect,
          signal,
          outage: h.outage,
          budget: attempts?.budget ?? new OutageBudget(h.reconnect.maxOutageMs),
          request: attempts,
          stopped: () => h.closed() || !ours(),
        },
      );
    } catch (error) {
      if (!ours()) return undefined;
      if (h.closed() || error instanceof ContinuityError) throw error;
      // The connection failed before any answer: whether the server ran it is unknown,
      // so it is not sent again; the caller gets a typed error to decide.
      throw (
        (await corsRefusal(h.url, error, (u, i) => h.fetch(u, i))) ??
        new ContinuityError(
          'request-abandoned',
          `The request's connection failed before an answer: ${(error as Error).message}`,
          { mayHaveRun: true },
          { cause: error },
        )
      );
    } finally {
      if (posting) owned = this.posting.end(posting);
    }
    if (owned) return response;
    // Failed by a recovery while the headers were on their way: never sent again.
    await response.body?.cancel().catch(() => {});
    return undefined;
  }

  /** Acts on a POST's answer ({@link classifyPost}); true when a stream took over `release`. */
  async #act(
    message: JsonRpcMessage,
    mayRecover: boolean,
    session: string | undefined,
    response: Response,
    release: () => void,
    attempts: RequestAttempts | undefined,
  ): Promise<boolean> {
    const initializing = 'method' in message && message.method === 'initialize';
    if (initializing && response.ok)
      this.#host.swap({ id: response.headers.get(Header.SessionId) ?? undefined, epoch: response.headers.get(Header.ReplayEpoch) });
    // A 400 may name the session as its cause (servers that do not say 404): read it to see.
    const rejection = needsRejectionText(response.status, session, initializing) ? await response.text().catch(() => '') : undefined;
    const verdict = classifyPost({
      status: response.status,
      contentType: response.headers.get(Header.ContentType) ?? '',
      hasBody: response.body !== null,
      epoch: response.headers.get(Header.ReplayEpoch),
      session,
      knownEpoch: this.#host.session().epoch,
      initializing,
      rejection,
    });
    const request = 'method' in message && 'id' in message ? message : undefined;
    switch (verdict.kind) {
      case 'session-gone': {
        // Nothing of this POST ran: it is safe to send again, after a new session is set up.
        // Its reason (a session that could not be rebuilt, say) is what the application is told.
        const gone = goneError(verdict.status === 404 ? await response.text().catch(() => '') : '');
        if (!mayRecover) throw gone;
        await this.#host.recover(gone, session);
        await this.post(message, false, attempts);
        return false;
      }
      case 'refused': {
        const text = rejection ?? (await response.text().catch(() => ''));
        throw refusalError(
          response.status,
          text,
          () => new ContinuityError('response-invalid', `HTTP ${response.status}: ${text.slice(0, 200)}`, { status: response.status }),
        );
      }
      case 'epoch-changed':
        // This POST reached the server, so it is failed with the rest: never re-sent.
        await response.body?.cancel();
        await this.#host.failWithSession(request, toDivergenceError(verdict), session);
        return false;
      default:
    }
    if ('method' in message && message.method === 'notifications/initialized') this.#host.initialized();
    return this.#read(verdict, request, response, release);
  }

  /** Reads an accepted POST's answer; true when a stream took over `release`. */
  async #read(verdict: PostVerdict, request: JsonRpcRequest | undefined, response: Response, release: () => void): Promise<boolean> {
    const id = request?.id;
    if (verdict.kind === 'stream') {
      void this.#host.follow(request, response).finally(release);
      return true;
    }
    if (verdict.kind === 'json') {
      for (const m of jsonAnswer(response.status, await response.text(), id)) this.#host.deliver(m);
      return false;
    }
    await response.body?.cancel();
    if (verdict.kind === 'not-an-answer' && id !== undefined) throw notAnAnswer(response.status, verdict.contentType);
    return false;
  }
}
