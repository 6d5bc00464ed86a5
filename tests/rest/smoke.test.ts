import { describe, expect, test } from "@jest/globals";
import { call, intake } from "../helpers.ts";

describe("smoke", () => {
  test("intake then read", async () => {
    const created = await intake();
    const read = await call("GET", `/api/v1/providers/${created.providerCode}`);
    expect(read.status).toBe(200);
    expect(read.body.providerCode).toBe(created.providerCode);
  });
});
