/** Drops the copies of the run's template that the test files made (tests/database.ts). */
import { dropCopies } from "./database.ts";

export default async function globalTeardown() {
  await dropCopies();
}
