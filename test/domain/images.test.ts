// Uploaded images checked by their bytes (domain/images.ts): every kind of PNG, a JPEG's header, and
// what would break or swamp the PDF writer refused with the reason. That the PDF writer draws what is
// accepted: test/pay/invoice-pdf.test.ts.
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { inspectImage } from "../../src/domain/images.js";
import { png } from "../helpers/png.js";

/** A JPEG's header up to its frame (the PDF writer embeds JPEG data as it is). */
function jpegHeader(width: number, height: number): Buffer {
  const app0 = [0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00];
  const sof = [0xff, 0xc0, 0x00, 0x0b, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x01, 0x01, 0x11, 0x00];
  return Buffer.from([0xff, 0xd8, ...app0, 0xff, ...sof, 0xff, 0xd9]);
}

describe("inspectImage", () => {
  it.each([
    ["RGBA", { colourType: 6 }],
    ["RGB", { colourType: 2 }],
    ["grey", { colourType: 0 }],
    ["grey with alpha", { colourType: 4 }],
    ["palette", { colourType: 3 }],
    ["interlaced RGBA", { colourType: 6, interlaced: true }],
    ["interlaced RGB", { colourType: 2, interlaced: true }],
  ] as const)("accepts a %s PNG", (_kind, options) => {
    expect(inspectImage(png({ width: 37, height: 13, ...options }))).toEqual({ type: "image/png", width: 37, height: 13 });
  });

  it("reads a JPEG's size from its frame header", () => {
    expect(inspectImage(jpegHeader(640, 200))).toEqual({ type: "image/jpeg", width: 640, height: 200 });
  });

  it("refuses what is not a PNG or JPEG, or whose structure does not hold", () => {
    const neither = { problem: "is not a PNG or JPEG image (its bytes are neither)" };
    expect(inspectImage(Buffer.from("GIF89a\x01\x00\x01\x00\x00\x00\x00;", "latin1"))).toEqual(neither);
    expect(inspectImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toEqual(neither);
    const good = png({ width: 8, height: 8 });
    // Cut short, a corrupt stream, too little or too much pixel data for the header's size.
    expect(inspectImage(good.subarray(0, good.length - 20))).toEqual(neither);
    expect(inspectImage(png({ width: 8, height: 8, idat: Buffer.from("not zlib at all") }))).toEqual(neither);
    expect(inspectImage(png({ width: 8, height: 8, idat: deflateSync(Buffer.alloc(8 * 33 - 1)) }))).toEqual(neither);
    expect(inspectImage(png({ width: 8, height: 8, idat: deflateSync(Buffer.alloc(8 * 33 + 1)) }))).toEqual(neither);
    // A JPEG whose image data starts before any frame header.
    expect(inspectImage(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 0x00, 0x00]))).toEqual(neither);
  });

  it("refuses a small file declaring a huge image before inflating anything", () => {
    // 20 000 × 20 000 RGBA would inflate to 1.6 GB: the header alone refuses it.
    const bomb = png({ width: 20_000, height: 20_000, idat: deflateSync(Buffer.alloc(1)) });
    expect(inspectImage(bomb)).toEqual({ problem: "must be at most 2048×2048 pixels (this one is 20000×20000)" });
    expect(inspectImage(jpegHeader(4000, 10))).toEqual({ problem: "must be at most 2048×2048 pixels (this one is 4000×10)" });
  });
});
