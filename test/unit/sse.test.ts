import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import { encodeSseComment, encodeSseEvent, encodeSseLogEvent, encodeSseRetry, type SseEvent } from '../../src/protocol/sse.js';
import { isContinuityError } from '../../src/protocol/errors.js';

interface Parsed {
  events: EventSourceMessage[];
  retries: number[];
  comments: string[];
  errors: ParseError[];
}

/** Runs `text` through the real parser, whole and (to catch chunking issues) one character at a time. */
function parse(text: string): Parsed {
  const run = (chunks: string[]): Parsed => {
    const out: Parsed = { events: [], retries: [], comments: [], errors: [] };
    const parser = createParser({
      onEvent: (e) => out.events.push(e),
      onRetry: (r) => out.retries.push(r),
      onComment: (c) => out.comments.push(c),
      onError: (e) => out.errors.push(e),
    });
    for (const c of chunks) parser.feed(c);
    return out;
  };
  const whole = run([text]);
  const split = run([...text]);
  assert.deepEqual(split, whole, 'chunked parse differs from whole parse');
  return whole;
}

/** What an SSE parser hands back for `data`: every line terminator becomes LF. */
function normalized(data: string): string {
  return data.replace(/\r\n|\r/g, '\n');
}

function roundTrip(event: SseEvent): EventSourceMessage {
  const parsed = parse(encodeSseEvent(event));
  assert.deepEqual(parsed.errors, []);
  assert.equal(parsed.events.length, 1, `exactly one event for ${JSON.stringify(event)}`);
  return parsed.events[0] as EventSourceMessage;
}

function assertFieldInvalid(fn: () => unknown): void {
  assert.throws(fn, (err: unknown) => isContinuityError(err, 'sse-field-invalid'));
}

describe('sse: encodeSseEvent round trips through eventsource-parser', () => {
  const datas: Array<[string, string]> = [
    ['plain', 'hello'],
    ['LF', 'a\nb\nc'],
    ['CR', 'a\rb\rc'],
    ['CRLF', 'a\r\nb\r\nc'],
    ['mixed terminators', 'a\nb\rc\r\nd\n\re'],
    ['trailing newline', 'abc\n'],
    ['trailing CRLF', 'abc\r\n'],
    ['leading newline', '\nabc'],
    ['leading CR', '\rabc'],
    ['empty string', ''],
    ['only LF', '\n'],
    ['only newlines', '\n\n\n'],
    ['only CRs', '\r\r'],
    ['only CRLFs', '\r\n\r\n'],
    ['blank line in the middle', 'a\n\nb'],
    ['NUL', 'a\u0000b\u0000'],
    ['leading space', ' x'],
    ['two leading spaces', '  x'],
    ['colon first', ':not a comment'],
    ['looks like fields', 'id: evil\nevent: evil\nretry: 1\ndata: x'],
    ['unicode', 'h\u00e9llo \u{1F600} \u4e16\u754c \u2028\u2029 \u0085'],
    ['BOM first', '\uFEFFx'],
    ['JSON', JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'line1\nline2\r\n\u0000' }] } })],
    ['long', 'x'.repeat(100_000)],
  ];

  for (const [label, data] of datas) {
    it(`data: ${label}`, () => {
      const e = roundTrip({ data });
      assert.equal(e.data, normalized(data));
      assert.equal(e.id, undefined);
      assert.equal(e.event, undefined);
    });
  }

  it('JSON data parses back to the same value', () => {
    const value = { jsonrpc: '2.0', method: 'notifications/message', params: { text: 'a\nb', n: 1.5, u: '\u{1F600}' } };
    const e = roundTrip({ data: JSON.stringify(value, null, 2) });
    assert.deepEqual(JSON.parse(e.data), value);
  });

  it('id and event are carried', () => {
    const e = roundTrip({ id: 'ep.st.1.AbCdEfGh-_012345', event: 'message', data: '{}' });
    assert.deepEqual(e, { id: 'ep.st.1.AbCdEfGh-_012345', event: 'message', data: '{}' });
  });

  it('id and event with leading space and odd characters survive', () => {
    const e = roundTrip({ id: ' a:b ', event: ' ev:t ', data: 'x' });
    assert.equal(e.id, ' a:b ');
    assert.equal(e.event, ' ev:t ');
  });

  it('an empty id is sent (it resets the last event ID)', () => {
    const text = encodeSseEvent({ id: '', data: 'x' });
    assert.match(text, /^id: ?$/m);
    assert.equal(roundTrip({ id: '', data: 'x' }).id, '');
  });

  it('several events in one stream parse back in order', () => {
    const input: SseEvent[] = [{ id: '1', data: 'a\r\nb' }, { data: '' }, { id: '3', event: 'x', data: '\n' }, { data: 'last' }];
    const parsed = parse(input.map(encodeSseEvent).join(''));
    assert.deepEqual(parsed.errors, []);
    assert.deepEqual(
      parsed.events.map((e) => [e.id, e.event, e.data]),
      input.map((e) => [e.id, e.event, normalized(e.data)]),
    );
  });

  it('every encoded event ends with a blank line and contains no CR', () => {
    for (const [, data] of datas) {
      const text = encodeSseEvent({ id: 'i', event: 'e', data });
      assert.ok(text.endsWith('\n\n'), 'ends with a blank line');
      assert.ok(!text.includes('\r'), 'contains no CR');
    }
  });
});

describe('sse: forbidden characters in id and event', () => {
  for (const [label, bad] of [
    ['CR', 'a\rb'],
    ['LF', 'a\nb'],
    ['CRLF', 'a\r\nb'],
    ['NUL', 'a\u0000b'],
    ['trailing LF', 'ab\n'],
    ['only NUL', '\u0000'],
  ] as const) {
    it(`id with ${label} throws sse-field-invalid`, () => assertFieldInvalid(() => encodeSseEvent({ id: bad, data: 'x' })));
    it(`event with ${label} throws sse-field-invalid`, () => assertFieldInvalid(() => encodeSseEvent({ event: bad, data: 'x' })));
  }

  it('the error names the field', () => {
    try {
      encodeSseEvent({ id: 'a\nb', data: 'x' });
      assert.fail('expected a throw');
    } catch (err) {
      assert.ok(isContinuityError(err, 'sse-field-invalid'), `expected sse-field-invalid, got ${String(err)}`);
      assert.equal(err.detail?.field, 'id');
    }
  });
});

describe('sse: retry', () => {
  it('encodeSseEvent emits retry and the parser reports it', () => {
    const parsed = parse(encodeSseEvent({ id: '7', data: 'x', retry: 2500 }));
    assert.deepEqual(parsed.retries, [2500]);
    assert.equal(parsed.events.length, 1);
    assert.equal(parsed.events[0]?.data, 'x');
    assert.equal(parsed.events[0]?.id, '7');
  });

  it('retry 0 is allowed', () => {
    assert.deepEqual(parse(encodeSseEvent({ data: 'x', retry: 0 })).retries, [0]);
    assert.deepEqual(parse(encodeSseRetry(0)).retries, [0]);
  });

  it('encodeSseRetry emits a retry directive that dispatches no event', () => {
    const parsed = parse(encodeSseRetry(1000));
    assert.deepEqual(parsed.retries, [1000]);
    assert.deepEqual(parsed.events, []);
    assert.deepEqual(parsed.errors, []);
  });

  for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
    it(`invalid retry ${bad} throws sse-field-invalid`, () => {
      assertFieldInvalid(() => encodeSseEvent({ data: 'x', retry: bad }));
      assertFieldInvalid(() => encodeSseRetry(bad));
    });
  }
});

describe('sse: comments', () => {
  it('a comment is ignored by the parser and dispatches nothing', () => {
    const parsed = parse(`${encodeSseComment('keep-alive')}${encodeSseEvent({ data: 'after' })}`);
    assert.deepEqual(parsed.comments, ['keep-alive']);
    assert.deepEqual(
      parsed.events.map((e) => e.data),
      ['after'],
    );
    assert.deepEqual(parsed.errors, []);
  });

  it('an empty comment is allowed', () => {
    const parsed = parse(encodeSseComment(''));
    assert.deepEqual(parsed.events, []);
    assert.deepEqual(parsed.errors, []);
    assert.equal(parsed.comments.length, 1);
  });

  for (const bad of ['a\nb', 'a\rb', 'a\r\nb', 'a\u0000b', '\ndata: injected']) {
    it(`comment ${JSON.stringify(bad)} throws sse-field-invalid`, () => assertFieldInvalid(() => encodeSseComment(bad)));
  }
});

describe('sse: log events (IDs the codec made)', () => {
  const id = 'ep0ch.s1.42.AbCdEfGhIjKlMnOp';
  const cases: Array<[string, string, number | undefined]> = [
    ['JSON on one line', '{"jsonrpc":"2.0","method":"m","params":{"s":"a\\nb"}}', undefined],
    ['an empty priming event with retry', '', 1500],
    ['a stored payload with raw line breaks (never injects a field)', 'a\r\nid: evil\rretry: 1\nb', undefined],
  ];
  for (const [name, data, retry] of cases) {
    it(`encodes the same bytes as encodeSseEvent: ${name}`, () => {
      const text = encodeSseLogEvent(id, data, retry);
      assert.equal(text, encodeSseEvent(retry === undefined ? { id, data } : { id, data, retry }));
      const parsed = parse(text);
      assert.deepEqual(parsed.errors, []);
      assert.equal(parsed.events.length, 1);
      assert.equal(parsed.events[0]?.id, id);
      assert.equal(parsed.events[0]?.data, normalized(data));
      assert.deepEqual(parsed.retries, retry === undefined ? [] : [retry]);
    });
  }
});
