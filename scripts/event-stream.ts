// Server-sent events (GET /events) as a client reads them off the wire: the
// bench's streams and the live-events tests.

export interface ServerEvent {
  event: string;
  data: string;
}

/**
 * A reader for a response's text chunks: each complete event (its lines up to
 * a blank line) goes to onEvent, "message" when it names none; the rest waits
 * for the next chunk.
 */
export function eventReader(onEvent: (received: ServerEvent) => void): (chunk: string) => void {
  let buffer = "";
  return (chunk) => {
    buffer += chunk;
    let split: number;
    while ((split = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, split);
      buffer = buffer.slice(split + 2);
      let event = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data = line.slice(6);
      }
      onEvent({ event, data });
    }
  };
}
