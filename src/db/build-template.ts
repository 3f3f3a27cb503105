// `npm run build`'s step after tsc: writes dist/db/template.tar.gz and template.json (src/db/template.ts).
import { writeTemplate } from "./template.js";

await writeTemplate();
