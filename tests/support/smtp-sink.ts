// A real SMTP server in the test process (issue 28): smtp-server speaks SMTP, mailparser
// reads what arrived. One port; how it answers can be changed between mails:
//   accept  — takes every mail;
//   refuse  — answers 451 to the message (a temporary refusal);
//   hang    — accepts the connection and never greets (the sender's timeouts must end it);
//   drop    — greets, takes the envelope, then closes the connection in the middle of the message.
// down() closes the port (connection refused) and up() opens it again on the same number.
import net from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
  date: Date | undefined;
  raw: string;
}

export type SinkMode = "accept" | "refuse" | "hang" | "drop";

export interface SmtpSink {
  readonly port: number;
  /** smtp://127.0.0.1:<port> (no TLS: the sink offers no STARTTLS). */
  readonly url: string;
  readonly mails: ReceivedMail[];
  mode: SinkMode;
  /** Resolves with the mails once `predicate` holds for them (polling), or rejects after `timeoutMs`. */
  waitFor(predicate: (mails: ReceivedMail[]) => boolean, timeoutMs?: number): Promise<ReceivedMail[]>;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/** "drop": greets, takes the envelope, and closes the connection at the first bytes of the message. */
function dropDialog(socket: net.Socket) {
  socket.write("220 sink ESMTP\r\n");
  let inData = false;
  socket.on("data", (chunk: Buffer) => {
    if (inData) {
      socket.destroy();
      return;
    }
    for (const line of chunk.toString("latin1").split("\r\n").filter(Boolean)) {
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === "EHLO" || verb === "HELO") socket.write("250 sink\r\n");
      else if (verb === "DATA") {
        inData = true;
        socket.write("354 go ahead\r\n");
      } else socket.write("250 OK\r\n");
    }
  });
}

export async function startSmtpSink(
  opts: { port?: number; onMail?: (mail: ReceivedMail) => void } = {},
): Promise<SmtpSink> {
  const mails: ReceivedMail[] = [];
  const open = new Set<net.Socket>();
  let mode: SinkMode = "accept";
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    banner: "coinkeep test sink",
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if (mode === "refuse") {
          callback(Object.assign(new Error("Try again later (test sink)"), { responseCode: 451 }));
          return;
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        simpleParser(raw)
          .then((parsed) => {
            const mail: ReceivedMail = {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
              to: session.envelope.rcptTo.map((r) => r.address),
              subject: parsed.subject ?? "",
              text: parsed.text ?? "",
              html: typeof parsed.html === "string" ? parsed.html : "",
              messageId: parsed.messageId ?? "",
              date: parsed.date,
              raw,
            };
            mails.push(mail);
            opts.onMail?.(mail);
            callback();
          })
          .catch((error: unknown) => callback(error instanceof Error ? error : new Error("unreadable")));
      });
    },
  });

  const listener = net.createServer((socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => undefined);
    if (mode === "hang") return;
    if (mode === "drop") {
      dropDialog(socket);
      return;
    }
    smtp.connect(socket);
  });
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      listener.once("error", reject);
      listener.listen(port, "127.0.0.1", () => {
        listener.off("error", reject);
        resolve((listener.address() as net.AddressInfo).port);
      });
    });
  const port = await listen(opts.port ?? 0);
  const down = () =>
    new Promise<void>((resolve) => {
      for (const socket of open) socket.destroy();
      listener.close(() => resolve());
    });
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    mails,
    get mode() {
      return mode;
    },
    set mode(next: SinkMode) {
      mode = next;
    },
    async waitFor(predicate, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(mails)) {
        if (Date.now() > deadline)
          throw new Error(`the sink did not get the expected mails (it has ${mails.length})`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return mails;
    },
    down,
    async up() {
      await listen(port);
    },
    async close() {
      await down().catch(() => undefined);
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    },
  };
}
