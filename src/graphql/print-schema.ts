// `npm run schema`: writes the printed GraphQL schema to schema.graphql at the repository root.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { printedSchema } from "./schema.js";

const target = fileURLToPath(new URL("../../schema.graphql", import.meta.url));
writeFileSync(target, printedSchema());
console.log(`Wrote ${target}`);
