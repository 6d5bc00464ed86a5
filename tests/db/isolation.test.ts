/**
 * Transactions are isolated from the requests around them ("nothing acknowledged is ever
 * lost"). On SQLite every query goes through one connection: unless the service keeps other
 * requests' statements out while an interactive transaction is open (src/db/sqlite.ts), a read sees
 * what that transaction has not committed, and a write outside it becomes part of it — and is undone
 * when it rolls back. A PATCH with a stale If-Match is such a transaction: it claims the next
 * version, then finds If-Match wrong and rolls back (src/providers/provider.write.ts). On PostgreSQL
 * the same test shows READ COMMITTED at work.
 */
import { describe, expect, test } from "@jest/globals";
import { call, db, intake } from "../helpers.ts";

describe("interactive transactions are isolated", () => {
  test("while a transaction is held open, a read does not see it and a write beside it outlives its rollback", async () => {
    const held = await intake();
    const other = await intake();
    let inside!: () => void;
    const opened = new Promise<void>((resolve) => {
      inside = resolve;
    });
    let letGo!: () => void;
    const hold = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    // A transaction that claims version 2 of `held`, waits, then rolls back (as a stale If-Match
    // does, only held open long enough for the requests below to run — or to wait their turn).
    const transaction = db
      .$transaction(async (tx) => {
        await tx.provider.updateMany({
          where: { providerCode: held.providerCode },
          data: { version: { increment: 1 } },
        });
        inside();
        await hold;
        throw new Error("roll back");
      })
      .catch((error: Error) => error.message);
    await opened;
    const read = call("GET", `/api/v1/providers/${held.providerCode}`);
    const write = call("PATCH", `/api/v1/providers/${other.providerCode}`, {
      token: other.accessToken,
      body: { summary: "written beside a transaction that rolls back" },
    });
    // Give both requests time to run into the open transaction, were they allowed to.
    await new Promise((resolve) => setTimeout(resolve, 100));
    letGo();
    expect(await transaction).toBe("roll back");
    expect((await read).body.version).toBe(1);
    expect((await write).status).toBe(200);
    const kept = await db.provider.findUniqueOrThrow({ where: { providerCode: other.providerCode } });
    expect(kept).toMatchObject({ version: 2, summary: "written beside a transaction that rolls back" });
    expect(await db.providerVersion.count({ where: { providerId: kept.id } })).toBe(2);
  });
});
