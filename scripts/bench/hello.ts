// The yardstick of the page benchmark: a bare node:http "hello world" server,
// run in its own process and measured with the same autocannon settings as
// each page. Prints "ready" once it listens on PORT.
import { createServer } from "node:http";

const server = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "text/plain" });
  response.end("hello world");
});
server.listen(Number(process.env.PORT ?? 3299), "127.0.0.1", () => console.log("ready"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
