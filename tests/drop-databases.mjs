/**
 * Drops the PostgreSQL databases named on the command line, one at a time, from the server's
 * maintenance database (the first argument). The suite's global teardown starts it detached
 * (tests/database.ts): each drop waits for a checkpoint, up to a second apiece on a busy machine, and
 * jest need not wait for them to exit. Plain JavaScript, so it runs without jest's transform.
 */
import pg from "pg";

const [adminUrl, ...names] = process.argv.slice(2);
const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
await admin.connect();
try {
  for (const name of names) {
    // One that is gone already (a later run's teardown, or .ci/run, dropped it) is no matter.
    await admin.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`).catch(() => {});
  }
} finally {
  await admin.end();
}
