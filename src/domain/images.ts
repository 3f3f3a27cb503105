// Uploaded images (a merchant's logo) checked by their bytes before they are stored: the PDF writer
// decodes a PNG's pixels later, on the server, where a corrupt stream or a small file declaring a huge
// image must not be the first to find out. A PNG is inflated here once, within the size its header
// declares; a JPEG is embedded in PDFs as it is, so its header is enough.
import { inflateSync } from "node:zlib";

/** The largest width and height accepted, in pixels (a logo is drawn a few centimetres wide). */
export const IMAGE_MAX_SIDE = 2048;

/** What an image's bytes say it is. */
export interface ImageInfo {
  type: "image/png" | "image/jpeg";
  width: number;
  height: number;
}

/** The type and size of a PNG or JPEG whose structure holds, or why it is refused (a phrase after "must"/"is"). */
export function inspectImage(data: Buffer): ImageInfo | { problem: string } {
  const info = data.subarray(0, 8).equals(PNG_SIGNATURE) ? inspectPng(data) : isJpeg(data) ? inspectJpeg(data) : null;
  if (!info) return { problem: "is not a PNG or JPEG image (its bytes are neither)" };
  if (info.width < 1 || info.height < 1 || info.width > IMAGE_MAX_SIDE || info.height > IMAGE_MAX_SIDE) {
    return { problem: `must be at most ${IMAGE_MAX_SIDE}×${IMAGE_MAX_SIDE} pixels (this one is ${info.width}×${info.height})` };
  }
  return info;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
// Samples per pixel of each PNG colour type (grey, RGB, palette, grey + alpha, RGBA).
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
// Adam7's passes: first column and row, then the steps between them.
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

function inspectPng(data: Buffer): ImageInfo | null {
  const chunks = pngChunks(data);
  const header = chunks?.[0];
  if (!chunks || header?.type !== "IHDR" || header.body.length !== 13 || chunks.at(-1)?.type !== "IEND") return null;
  const width = header.body.readUInt32BE(0);
  const height = header.body.readUInt32BE(4);
  const [depth, colourType, , , interlace] = header.body.subarray(8);
  const channels = PNG_CHANNELS[colourType!];
  if (channels === undefined || ![1, 2, 4, 8, 16].includes(depth!) || interlace! > 1) return null;
  if (width > IMAGE_MAX_SIDE || height > IMAGE_MAX_SIDE) return { type: "image/png", width, height };
  // Each row is a filter byte and its packed samples; interlaced images store seven smaller images.
  const bits = channels * depth!;
  const rows = (w: number, h: number) => (w > 0 && h > 0 ? h * (1 + Math.ceil((w * bits) / 8)) : 0);
  const expected =
    interlace === 1 ? ADAM7.reduce((sum, [x, y, dx, dy]) => sum + rows(Math.ceil((width - x) / dx), Math.ceil((height - y) / dy)), 0) : rows(width, height);
  const idat = Buffer.concat(chunks.filter((c) => c.type === "IDAT").map((c) => c.body));
  try {
    if (inflateSync(idat, { maxOutputLength: expected }).length !== expected) return null;
  } catch {
    return null;
  }
  return { type: "image/png", width, height };
}

/** The chunks of a PNG (after its signature), or null when their lengths do not add up. */
function pngChunks(data: Buffer): { type: string; body: Buffer }[] | null {
  const chunks: { type: string; body: Buffer }[] = [];
  for (let at = 8; at < data.length;) {
    if (at + 12 > data.length) return null;
    const length = data.readUInt32BE(at);
    const end = at + 12 + length;
    if (end > data.length) return null;
    chunks.push({ type: data.subarray(at + 4, at + 8).toString("latin1"), body: data.subarray(at + 8, at + 8 + length) });
    at = end;
  }
  return chunks;
}

function isJpeg(data: Buffer): boolean {
  return data.length > 4 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff;
}

// Markers of a start of frame (baseline, progressive, lossless…), which carries the image's size.
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/** Walks the JPEG's segments to its frame header, as the PDF writer does. */
function inspectJpeg(data: Buffer): ImageInfo | null {
  for (let at = 2; at + 4 <= data.length;) {
    if (data[at] !== 0xff) return null;
    const marker = data[at + 1]!;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    const length = data.readUInt16BE(at + 2);
    if (SOF.has(marker)) return at + 9 <= data.length ? { type: "image/jpeg", height: data.readUInt16BE(at + 5), width: data.readUInt16BE(at + 7) } : null;
    if (marker === 0xd9 || marker === 0xda || length < 2) return null; // the end, or image data before any frame header
    at += 2 + length;
  }
  return null;
}
