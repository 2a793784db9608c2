// Reading a body without ever buffering more than a limit: counting while
// reading, so a chunked or lying body stops at the limit.

/** The stream's bytes, or "too-large" once more than maxBytes arrive. Read errors are thrown. */
export async function readAtMost(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array | "too-large"> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => {});
        return "too-large";
      }
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
