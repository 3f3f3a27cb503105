// The security headers of every page a browser shows (the hosted pages, the dashboard): one strict
// Content-Security-Policy built from what the page needs, and the headers that go with it.

/** What a page needs from the browser; everything else is refused. */
export interface PagePolicy {
  /**
   * The page's own script and the other origins it connects to (its own is always allowed);
   * null for a page that runs no script and connects nowhere.
   */
  script: { connectTo: string[] } | null;
  /** Origins that may show the page in a frame; none when empty. */
  frameAncestors: string[];
  /** What a link followed from the page tells the next site about it. */
  referrer: "no-referrer" | "same-origin";
  /**
   * Frames of the page's own origin (none otherwise): the dashboard shows an email's HTML in a
   * sandboxed frame served under a policy of its own (dashboard/email-preview.ts).
   */
  ownFrames?: boolean;
  /**
   * An in-browser code editor (GraphiQL's Monaco): its web workers from this origin, the styles it
   * writes at run time, and its fonts (data: URLs in its stylesheet).
   */
  codeEditor?: boolean;
}

/** The response headers that hold a page to `policy`. */
export function securityHeaders({ script, frameAncestors, referrer, ownFrames = false, codeEditor = false }: PagePolicy): Record<string, string> {
  const csp = [
    "default-src 'none'",
    script && "script-src 'self'",
    codeEditor && "worker-src 'self'",
    codeEditor ? "style-src 'self' 'unsafe-inline'" : "style-src 'self'",
    "img-src 'self' data:",
    codeEditor && "font-src 'self' data:",
    script && ["connect-src 'self'", ...script.connectTo].join(" "),
    ownFrames && "frame-src 'self'",
    "form-action 'self'",
    "base-uri 'none'",
    `frame-ancestors ${frameAncestors.length > 0 ? frameAncestors.join(" ") : "'none'"}`,
  ];
  return {
    "Content-Security-Policy": csp.filter(Boolean).join("; "),
    // Older browsers know only this header, which cannot name origins: sent when no one may frame the page.
    ...(frameAncestors.length === 0 && { "X-Frame-Options": "DENY" }),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": referrer,
  };
}
