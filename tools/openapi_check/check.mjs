// Validates an OpenAPI document (a file path argument) with @seriousme/openapi-schema-validator,
// which checks it against the official OpenAPI JSON Schema of its version (3.1 here). Prints
// "valid <version>" and exits 0, or prints the errors and exits 1.
import { Validator } from "@seriousme/openapi-schema-validator";
import { readFileSync } from "node:fs";

const doc = JSON.parse(readFileSync(process.argv[2], "utf8"));
const validator = new Validator();
const res = await validator.validate(doc);
if (res.valid) {
  console.log(`valid ${validator.version}`);
  process.exit(0);
}
console.log(JSON.stringify(res.errors, null, 2));
process.exit(1);
