/**
 * `npm run reviewer-token -- --sub NAME [--roles reviewer,admin] [--expires 8h]`
 * prints a reviewer JWT signed with the configured shared secret (the local default secret on a
 * fresh install), so the review queue can be tried without an identity provider.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { signReviewerToken } from "./reviewer.jwt.ts";

const { values } = parseArgs({
  options: {
    sub: { type: "string" },
    roles: { type: "string", default: "reviewer" },
    expires: { type: "string", default: "8h" },
  },
});
if (!values.sub) {
  console.error("usage: npm run reviewer-token -- --sub NAME [--roles reviewer,admin] [--expires 8h]");
  process.exit(2);
}
const token = await signReviewerToken(loadConfig(), values.sub, {
  roles: values.roles.split(",").map((r) => r.trim()),
  expiresIn: values.expires,
});
console.log(token);
