// CSV downloads (the ledger's and the charges' exports, over REST and from the dashboard): one way to
// send them, streamed as the domain writes the lines, named after what and which mode they hold.
import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";

/**
 * Streams `lines` as the download `<name>_<test|live>.csv` (`<name>.csv` when `livemode` is null: what
 * both modes share); never cached, as it holds the merchant's money or security history.
 */
export function sendCsv(reply: FastifyReply, name: string, livemode: boolean | null, lines: AsyncIterable<string> | Iterable<string>): FastifyReply {
  const mode = livemode === null ? "" : livemode ? "_live" : "_test";
  return reply
    .type("text/csv; charset=utf-8")
    .header("Content-Disposition", `attachment; filename="${name}${mode}.csv"`)
    .header("Cache-Control", "no-store")
    .send(Readable.from(lines));
}
