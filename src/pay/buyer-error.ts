// The one page a buyer meets when a hosted page cannot go on: an unknown link, a retired payment link,
// a seller that cannot take money right now, too many attempts, a failure of ours. The rule, written
// here once: a buyer reads, in the seller's name and on the hosted pages' look, what happened and what
// they can do. Never the API's message (written for merchants and operators: settings, commands,
// ids), a stack or a JSON body; the operator finds the precise reason in the log (routes.ts).
import type { AppError } from "../domain/errors.js";
import { statusOf } from "../http/errors.js";
import { document } from "./page.js";
import { escapeHtml as h } from "./qr.js";

/** What the buyer was looking at, as the page names it. */
export type BuyerTopic = "payment" | "invoice" | "payment link" | "refund" | "subscription";

/** Where the page is shown and whose it is. */
export interface BuyerErrorPlace {
  topic: BuyerTopic;
  /** The seller's display name when the record is known; "the shop" otherwise. */
  merchantName: string | null;
  /** The page to go back to, when going back helps. */
  backUrl: string | null;
  basePath: string;
  /** Seconds after which the page loads itself again (a page refused as busy), or null. */
  retryAfter?: number | null;
}

/** What the buyer reads for an error: the status it is answered with, a heading and what to do. */
interface Wording {
  status: number;
  title: string;
  text: string;
}

const capitalized = (s: string) => s[0]!.toUpperCase() + s.slice(1);

/** The status and words of the page for `e`, by its code alone (its message is never shown). */
function wordingOf(e: AppError, topic: BuyerTopic, seller: string): Wording {
  const status = statusOf(e);
  if (status === 404) {
    return {
      status,
      title: `${capitalized(topic)} not found`,
      text: `This link does not lead to a ${topic}. Check the link you were given, or ask ${seller} for a new one.`,
    };
  }
  if (e.code === "payment_link_inactive") {
    return { status, title: "This payment link no longer takes payments", text: `${capitalized(seller)} has retired it. Ask ${seller} for a new link.` };
  }
  if (e.code === "settlement_wallet_missing") {
    // Not the buyer's doing: the seller cannot take money right now.
    return {
      status: 503,
      title: `This ${topic} is not available right now`,
      text: `${capitalized(seller)} cannot take payments here at the moment, and nothing was charged. Contact ${seller} to pay another way, or try again later.`,
    };
  }
  if (e.code === "chain_unsupported") {
    return { status, title: "This network is not available", text: `Go back and choose one of the networks offered. If none suits you, contact ${seller}.` };
  }
  if (status === 429) {
    return { status, title: "Too many attempts", text: "Too many requests came from your network in the last minute. Wait a minute, then try again." };
  }
  if (status === 409) {
    return {
      status,
      title: `This ${topic} cannot take this step now`,
      text: `It may have been paid, cancelled or expired meanwhile. Go back to see where it stands; if something looks wrong, contact ${seller}.`,
    };
  }
  if (status < 500) {
    return { status, title: "This request could not be handled", text: `Go back and try again. If it keeps happening, contact ${seller}.` };
  }
  return {
    status,
    title: "Something went wrong on our side",
    text: `Your request was not completed. Try again in a minute; if it keeps happening, contact ${seller}.`,
  };
}

/** What a buyer reads about `e` inside a page that goes on (a refused form, a step refused meanwhile): the same words as the error page. */
export function buyerNotice(e: AppError, topic: BuyerTopic, merchantName: string | null): string {
  const wording = wordingOf(e, topic, merchantName ?? "the shop");
  return `${wording.title}. ${wording.text}`;
}

/** The page a buyer sees for `e` where `place` says, and the status to answer it with. */
export function buyerErrorPage(e: AppError, place: BuyerErrorPlace): { status: number; html: string } {
  const wording = wordingOf(e, place.topic, place.merchantName ?? "the shop");
  const body = [
    `<header>${place.merchantName ? `<p class="merchant">${h(place.merchantName)}</p>` : ""}<h1>${h(wording.title)}</h1></header>`,
    `<p>${h(wording.text)}</p>`,
    place.retryAfter ? `<p>This page tries again by itself in a few seconds.</p>` : "",
    place.backUrl ? `<p><a href="${h(place.backUrl)}">Back to the ${h(place.topic)}</a></p>` : "",
  ].join("\n");
  const title = place.merchantName ? `${wording.title} · ${place.merchantName}` : wording.title;
  return { status: wording.status, html: document(title, body, null, place.basePath, place.retryAfter ?? null) };
}
