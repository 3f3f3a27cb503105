// How the sender sorts an SMTP failure (email/transport.ts classify): refused for good (the email ends
// failed with the server's reply) or worth trying again on the schedule.
import { describe, expect, it } from "vitest";
import { classify } from "../../src/email/transport.js";

describe("classify", () => {
  it("takes a 5xx or a message that cannot be built as final, and anything else as passing", () => {
    expect(classify({ responseCode: 550, response: "550 5.1.1 No such user", code: "EENVELOPE" })).toEqual({
      result: "permanent",
      error: "550 5.1.1 No such user",
    });
    expect(classify({ code: "EENVELOPE", message: "No recipients defined" }).result).toBe("permanent");
    expect(classify({ responseCode: 451, response: "451 4.3.0 Try again later" }).result).toBe("transient");
    expect(classify({ code: "ECONNECTION", message: "connect ECONNREFUSED 127.0.0.1:25" }).result).toBe("transient");
    expect(classify({ code: "ETIMEDOUT", message: "Timeout" }).result).toBe("transient");
    // A refused login answers our settings, not the message: retried while the operator fixes SMTP_URL.
    expect(classify({ responseCode: 535, code: "EAUTH", response: "535 5.7.8 Authentication failed" }).result).toBe("transient");
  });
});
