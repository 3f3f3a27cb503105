// The one security-headers helper: the exact headers the hosted pages and the dashboard sent before it.
import { describe, expect, it } from "vitest";
import { securityHeaders } from "../../src/http/security-headers.js";

describe("securityHeaders", () => {
  it("lets the payment page's script reach PUBLIC_URL and names who may frame it, without X-Frame-Options", () => {
    const headers = securityHeaders({
      script: { connectTo: ["https://api.example"] },
      frameAncestors: ["https://shop.example", "https://www.shop.example"],
      referrer: "no-referrer",
    });
    expect(headers).toEqual({
      "Content-Security-Policy":
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' https://api.example; form-action 'self'; base-uri 'none'; frame-ancestors https://shop.example https://www.shop.example",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
    });
  });

  it("gives a page without script no script or connections, and one nobody frames X-Frame-Options: DENY too", () => {
    expect(securityHeaders({ script: null, frameAncestors: [], referrer: "no-referrer" })).toEqual({
      "Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
      "X-Frame-Options": "DENY",
      "X-Content-Type-Options": "nosniff",
      "Referrer-Policy": "no-referrer",
    });
  });

  it("keeps the dashboard's script to its own origin", () => {
    expect(securityHeaders({ script: { connectTo: [] }, frameAncestors: [], referrer: "same-origin" })["Content-Security-Policy"]).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
  });

  it("allows frames of the page's own origin only when asked (the dashboard's email previews)", () => {
    const csp = securityHeaders({ script: { connectTo: [] }, frameAncestors: [], referrer: "same-origin", ownFrames: true })["Content-Security-Policy"];
    expect(csp).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
  });
});
