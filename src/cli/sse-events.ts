import { DEFAULT_MAX_ANSWER_BYTES } from '../config.ts';
import { EstateError } from '../errors.ts';

export interface SseEvent {
  event: string;
  id: string | undefined;
  data: string;
}

/**
 * The events of a text/event-stream body, as the HTML standard parses them:
 * `event:`, `id:`, `data:` (lines joined with '\n'), comments and `retry:`
 * ignored, an event ends at a blank line. An event (its lines so far and the
 * line being read, comments aside) longer than `maxChars` characters is an `io` error naming
 * `from`: the stream is not read any further.
 */
export async function* sseEvents(body: AsyncIterable<Uint8Array>, maxChars = DEFAULT_MAX_ANSWER_BYTES, from = 'the server'): AsyncGenerator<SseEvent> {
  const tooLong = () =>
    new EstateError('io', `an event of the stream from ${from} is longer than ${maxChars} characters; estate stopped reading it (ESTATE_MAX_ANSWER_BYTES sets the limit)`);
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let id: string | undefined;
  let data: string[] = [];
  let eventChars = 0;
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.search(/\r\n|\r|\n/)) !== -1) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (data.length) yield { event: event || 'message', id, data: data.join('\n') };
        event = '';
        data = [];
        eventChars = 0;
        continue;
      }
      if (line.startsWith(':')) continue;
      eventChars += line.length + 1;
      if (eventChars > maxChars) throw tooLong();
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id' && !value.includes('\0')) id = value;
    }
    // The line being read counts too: a line that never ends is not kept whole.
    if (eventChars + buffer.length > maxChars) throw tooLong();
  }
}
