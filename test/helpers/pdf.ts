// A PDF's text as a reader would copy it, for tests that check what a generated document says.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";

// pdfjs reads the standard fonts' metrics from its own package (it warns without them); the path
// must end with a separator.
const standardFontDataUrl = join(dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json")), "standard_fonts") + "/";

/** The text of a PDF: a line per line of text, runs on a line joined by a space, pages separated by "\f". */
export async function pdfText(buf: Uint8Array): Promise<string> {
  const pdf = await getDocument({ data: new Uint8Array(buf), useSystemFonts: false, disableFontFace: true, standardFontDataUrl }).promise;
  try {
    const pages: string[] = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const content = await (await pdf.getPage(n)).getTextContent();
      let text = "";
      for (const item of content.items) {
        if (!("str" in item)) continue;
        text += item.str + (item.hasEOL ? "\n" : " ");
      }
      pages.push(
        text
          .replace(/ +/g, " ")
          .replace(/ ?\n ?/g, "\n")
          .trim(),
      );
    }
    return pages.join("\f");
  } finally {
    await pdf.destroy();
  }
}
