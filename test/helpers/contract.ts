// The contract test: every /v1 exchange the test suite makes through the harness is checked against
// GET /v1/openapi.json, both ways. The answer's status must be documented for its operation and
// its body must match that status's schema; a request that succeeded must match the request body
// schema. A /v1 path the document does not know is a failure if it was served.
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

interface Operation {
  requestBody?: { content: { "application/json": { schema: object } } };
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}
type Document = {
  paths: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
};

/** `schema` with its refs to the document's components (theirs to each other too) pointing at the schema added as "components". */
function atComponents(schema: object): object {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"components#/'));
}

/** Checks exchanges against one OpenAPI document. */
export class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false });
  private readonly validators = new Map<object, ValidateFunction>();
  private readonly templates: { template: string; pattern: RegExp }[];

  constructor(private readonly doc: Document) {
    this.ajv.addSchema(atComponents({ $id: "components", ...doc.components }), "components");
    // Literal segments first: /v1/customers/jwt is not /v1/customers/{id}.
    this.templates = Object.keys(doc.paths)
      .map((template) => ({ template, pattern: new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`) }))
      .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  }

  /** What is wrong with this exchange by the document, or null. */
  problem(method: string, url: string, requestBody: unknown, status: number, responseBody: unknown, contentType = "application/json"): string | null {
    const path = url.split("?")[0]!;
    const template = this.templates.find((t) => t.pattern.test(path))?.template;
    const operation = template ? this.doc.paths[template]![method.toLowerCase()] : undefined;
    // Served without being documented: a route missing from the document. (Refusals of unknown
    // paths or methods are the router's, not a route's.)
    if (!operation) return status < 400 ? `${method} ${path} answered ${status} but is not in the document` : null;
    const response = operation.responses[String(status)];
    if (!response) return `${method} ${template} answered ${status}, which the document does not list (${Object.keys(operation.responses)})`;
    // Another kind of answer (a PDF, a CSV export) must be one the document lists; it has no JSON schema.
    const media = contentType.split(";")[0]!.trim();
    if (media !== "application/json") {
      return response.content && !response.content[media] ? `${method} ${template} ${status} answered ${media}, which the document does not list` : null;
    }
    const schema = response.content?.["application/json"]?.schema;
    if (schema && !this.validate(schema, responseBody)) return `${method} ${template} ${status} answer: ${this.ajv.errorsText(this.lastErrors)}`;
    if (status < 300 && requestBody !== undefined) {
      const refused = this.requestBodyProblem(method, path, requestBody);
      if (refused) return `${method} ${template} accepted a request body the document refuses: ${refused}`;
    }
    return null;
  }

  /** Why the document refuses `body` as the request body of `method` `url`, or null. */
  requestBodyProblem(method: string, url: string, body: unknown): string | null {
    const template = this.templates.find((t) => t.pattern.test(url.split("?")[0]!))?.template;
    const schema = template ? this.doc.paths[template]![method.toLowerCase()]?.requestBody?.content["application/json"].schema : undefined;
    if (!schema) return `${method} ${url} takes no documented body`;
    return this.validate(schema, body) ? null : this.ajv.errorsText(this.lastErrors);
  }

  /** Why the document refuses `body` as what an endpoint receives for an event of `type`, or null. */
  webhookProblem(type: string, body: unknown): string | null {
    const schema = this.doc.webhooks?.[type]?.post?.requestBody?.content["application/json"].schema;
    if (!schema) return `the document has no webhook ${type}`;
    return this.validate(schema, body) ? null : `${type}: ${this.ajv.errorsText(this.lastErrors)}`;
  }

  /** Why `value` does not match `schema` (one of the document's, its refs to components), or null. */
  schemaProblem(schema: object, value: unknown): string | null {
    return this.validate(schema, value) ? null : this.ajv.errorsText(this.lastErrors);
  }

  private lastErrors: ValidateFunction["errors"] = null;

  private validate(schema: object, value: unknown): boolean {
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = this.ajv.compile(atComponents(schema));
      this.validators.set(schema, validate);
    }
    const ok = validate(value);
    this.lastErrors = validate.errors;
    return ok;
  }
}

const contracts = new Map<string, Contract>();

/**
 * The contract of the document `text`, one per distinct document in a test file: every app a file
 * starts serves the same one, and compiling its schemas again costs more than most tests take.
 */
export function contractOf(text: string): Contract {
  let contract = contracts.get(text);
  if (!contract) {
    contract = new Contract(JSON.parse(text) as Document);
    contracts.set(text, contract);
  }
  return contract;
}
