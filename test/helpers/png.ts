// Small PNG files built byte by byte, for tests of what accepts or draws an uploaded image.
import { crc32, deflateSync } from "node:zlib";

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

/** The options of `png`: colour type 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA. */
export interface PngOptions {
  width: number;
  height: number;
  colourType?: 0 | 2 | 3 | 4 | 6;
  interlaced?: boolean;
  /** Replaces the compressed image data (to make a broken file). */
  idat?: Buffer;
}

/** A PNG of 8-bit samples in a pattern of stripes, valid unless `idat` says otherwise. */
export function png({ width, height, colourType = 6, interlaced = false, idat }: PngOptions): Buffer {
  const bytesPerRow = (w: number) => w * CHANNELS[colourType]!;
  const image = (w: number, h: number) =>
    w > 0 && h > 0
      ? Buffer.concat(Array.from({ length: h }, (_, y) => Buffer.from([0, ...Array.from({ length: bytesPerRow(w) }, (_, x) => (x * 37 + y * 11) % 256)])))
      : Buffer.alloc(0);
  const raw = () =>
    interlaced ? Buffer.concat(ADAM7.map(([x, y, dx, dy]) => image(Math.ceil((width - x) / dx), Math.ceil((height - y) / dy)))) : image(width, height);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, colourType, 0, 0, interlaced ? 1 : 0], 8);
  const palette = colourType === 3 ? [chunk("PLTE", Buffer.from(Array.from({ length: 256 * 3 }, (_, i) => i % 256)))] : [];
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    ...palette,
    chunk("IDAT", idat ?? deflateSync(raw())),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** The file as the dashboard sends it. */
export function dataUrl(bytes: Buffer, type = "image/png"): string {
  return `data:${type};base64,${bytes.toString("base64")}`;
}

function chunk(type: string, body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([Buffer.from(type, "latin1"), body])));
  return Buffer.concat([length, Buffer.from(type, "latin1"), body, crc]);
}
