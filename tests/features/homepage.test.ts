/** A provider's home page (`homepageUrl`) through both doors: set at intake, changed and cleared by PATCH, kept in versions. */
import { describe, expect, test } from "@jest/globals";
import { intakeBody } from "../builders.ts";
import { doors } from "../doors.ts";
import { call, db } from "../helpers.ts";

describe.each(doors)("$name", (door) => {
  test("set at intake, shown on the profile, changed and cleared by the owner, each kept in its version", async () => {
    const created = await door.run(
      "Mutation.createProvider",
      intakeBody({ homepageUrl: "https://agent.example.com/" }),
    );
    expect(created.code).toBeUndefined();
    const { providerCode, accessToken: token } = created.data;
    expect(created.data.provider.homepageUrl).toBe("https://agent.example.com/");
    expect((await door.run("Query.provider", { providerCode })).data.homepageUrl).toBe("https://agent.example.com/");

    const changed = await door.run(
      "Mutation.updateProvider",
      { providerCode, homepageUrl: "https://example.org/agents/route" },
      { token },
    );
    expect(changed.data).toMatchObject({ homepageUrl: "https://example.org/agents/route", version: 2 });
    const cleared = await door.run("Mutation.updateProvider", { providerCode, homepageUrl: null }, { token });
    expect(cleared.data).toMatchObject({ homepageUrl: null, version: 3 });

    const snapshots = [];
    for (const version of [1, 2, 3]) {
      const read = await door.run("Query.providerVersion", { providerCode, version }, { token });
      snapshots.push(read.data.snapshot.homepageUrl);
    }
    expect(snapshots).toEqual(["https://agent.example.com/", "https://example.org/agents/route", null]);
    const second = await db.providerVersion.findFirstOrThrow({ where: { provider: { providerCode }, version: 2 } });
    expect(second.changedFields).toEqual(["homepageUrl"]);
  });

  test.each([
    ["plain http off loopback", "http://agent.example.com/"],
    ["another scheme", "ftp://agent.example.com/"],
    ["no scheme", "agent.example.com"],
    ["credentials in it", "https://user:pass@agent.example.com/"],
    ["over 2048 characters", `https://agent.example.com/${"a".repeat(2048)}`],
  ])(
    "a home page with %s is BAD_USER_INPUT naming homepageUrl, at intake and in a PATCH, and writes nothing",
    async (_why, url) => {
      const body = intakeBody({ homepageUrl: url });
      const refused = await door.run("Mutation.createProvider", body);
      expect([refused.code, refused.paths]).toEqual(["BAD_USER_INPUT", ["homepageUrl"]]);
      expect(await db.provider.count({ where: { providerCode: String(body.providerCode) } })).toBe(0);

      const created = await door.run("Mutation.createProvider", intakeBody());
      const { providerCode, accessToken: token } = created.data;
      const patch = await door.run("Mutation.updateProvider", { providerCode, homepageUrl: url }, { token });
      expect([patch.code, patch.paths]).toEqual(["BAD_USER_INPUT", ["homepageUrl"]]);
      const row = await db.provider.findUniqueOrThrow({ where: { providerCode } });
      expect([row.homepageUrl, row.version]).toEqual([null, 1]);
    },
  );
});

test("the OpenAPI document describes homepageUrl on the intake, the PATCH and the profile", async () => {
  const document = (await call("GET", "/openapi.json")).body;
  const schemas = document.components.schemas;
  expect(schemas.Provider.properties.homepageUrl).toBeDefined();
  expect(schemas.ProfileSnapshot.properties.homepageUrl).toBeDefined();
  for (const [path, method] of [
    ["/api/v1/providers", "post"],
    ["/api/v1/providers/{providerCode}", "patch"],
  ] as const) {
    const body = document.paths[path][method].requestBody.content["application/json"].schema;
    expect(body.properties.homepageUrl).toMatchObject({ type: expect.anything() });
  }
});
