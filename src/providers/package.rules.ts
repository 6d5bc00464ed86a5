/**
 * How an MCP server ships as a package a client starts (npm, PyPI, OCI, NuGet, MCPB, Cargo), as pure
 * rules: the shape of a profile's `packages`, each identifier checked against its registry's own
 * naming rules, versions that name one release, and variables that never hold a secret's value.
 * The shape follows the MCP registry's server.json (schema 2025-12-11, and Cargo from its current
 * draft), so a package maps to and
 * from its `packages[]` member field by field.
 */
import validateNpmName from "validate-npm-package-name";
import { z } from "zod";
import {
  ARGUMENT_KINDS,
  INPUT_FORMATS,
  PACKAGE_REGISTRIES,
  PACKAGE_TRANSPORTS,
  type PackageRegistry,
} from "./provider.enums.ts";

/** At most this many packages on a profile. The database holds the same bound. */
export const MAX_PACKAGES = 10;
const MAX_VARIABLES = 50;
const MAX_ARGUMENTS = 50;
const MAX_CHOICES = 50;

/** Where each registry is read from when a package names no `registryBaseUrl`. */
export const DEFAULT_REGISTRY_URLS: Record<PackageRegistry, string | null> = {
  NPM: "https://registry.npmjs.org",
  PYPI: "https://pypi.org",
  NUGET: "https://api.nuget.org/v3/index.json",
  OCI: null,
  MCPB: null,
  CARGO: "https://crates.io",
};

// PyPI (the packaging specification's name rule): letters, digits, . _ -, a letter or digit at both ends.
const PYPI_NAME = /^(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$/;
// NuGet (NuGet.Client's restricted package ids, NU5052): ASCII, no doubled separators, at most 100.
const NUGET_ID = /^[A-Za-z0-9_](?!.*[.-]{2})[A-Za-z0-9._-]{0,99}$/;
// OCI (distribution/reference's grammar): [domain[:port]/]path[:tag][@digest], the path lower case.
const OCI_DOMAIN = String.raw`(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::[0-9]+)?)`;
const OCI_COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const OCI_REFERENCE = new RegExp(
  String.raw`^(?:(${OCI_DOMAIN})/)?(${OCI_COMPONENT}(?:/${OCI_COMPONENT})*)(?::([\w][\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`,
);
const SHA256_HEX = /^[a-f0-9]{64}$/;
// crates.io: ASCII letters, digits, - and _, starting with a letter, at most 64.
const CRATE_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

/**
 * Why an identifier is not a name its registry would give a package; undefined when it is. OCI
 * identifiers pin their release themselves (a tag or a digest, not `latest`), as server.json asks.
 */
export function identifierProblem(registry: PackageRegistry, identifier: string): string | undefined {
  switch (registry) {
    case "NPM": {
      const verdict = validateNpmName(identifier);
      if (verdict.validForNewPackages) return undefined;
      return `is not an npm package name: ${[...(verdict.errors ?? []), ...(verdict.warnings ?? [])][0]}`;
    }
    case "PYPI":
      return PYPI_NAME.test(identifier) && identifier.length <= 200
        ? undefined
        : "is not a PyPI project name: letters, digits, . _ - (at most 200), a letter or digit at both ends";
    case "NUGET":
      return NUGET_ID.test(identifier) && !/[.-]$/.test(identifier)
        ? undefined
        : "is not a NuGet package id: at most 100 of A-Z a-z 0-9 . _ -, no doubled or trailing . or -";
    case "OCI": {
      const parts = OCI_REFERENCE.exec(identifier);
      if (!parts) return "is not an OCI image reference such as ghcr.io/owner/image:1.2.3";
      const [, domain, path, tag, digest] = parts;
      if (`${domain ? `${domain}/` : ""}${path}`.length > 255) return "must name an image in at most 255 characters";
      if (!tag && !digest) return "must pin the image with a tag or a digest (e.g. :1.2.3)";
      if (tag === "latest" && !digest) return "must pin a release: the tag `latest` moves";
      return undefined;
    }
    case "CARGO":
      return CRATE_NAME.test(identifier)
        ? undefined
        : "is not a crate name: at most 64 of A-Z a-z 0-9 - _, starting with a letter";
    case "MCPB":
      return /^https:\/\/[^\s/?#]+\/\S*$/.test(identifier) && URL.canParse(identifier)
        ? undefined
        : "must be the https: URL of the bundle file";
  }
}

// The MCP registry's own test of a version range (internal/validators): a version names one release.
const VERSION_NUMBER = String.raw`v?\d+(?:\.\d+){0,3}(?:-[0-9A-Za-z.-]+)?`;
const VERSION_RANGES = [
  new RegExp(String.raw`^\s*(?:\^|~|>=|<=|>|<|=)\s*${VERSION_NUMBER}\s*$`),
  new RegExp(String.raw`^\s*${VERSION_NUMBER}\s-\s*${VERSION_NUMBER}\s*$`),
  new RegExp(String.raw`^\s*${VERSION_NUMBER}\s*(?:\|\|\s*${VERSION_NUMBER}\s*)+$`),
];
/** `1.x`, `1.2.*`: a wildcard in the release's numbers (not in a pre-release tag such as `-next`). */
const WILDCARD = /^v?(?:\d+|[xX*])(?:\.(?:\d+|[xX*])){1,2}$/;

/** Why a version does not name one release (a range, a wildcard, `latest`); undefined when it does. */
export function versionProblem(version: string): string | undefined {
  if (/^(?:latest|\*|x|X)$/.test(version)) return "must name one release, not `latest` or a wildcard";
  const numbers = version.split("-")[0] as string;
  const wildcard = WILDCARD.test(numbers) && /(?:^|\.)[xX*](?=\.|$)/.test(numbers);
  if (wildcard || VERSION_RANGES.some((range) => range.test(version))) return "must name one release, not a range";
  if (/\s/.test(version)) return "must not contain white space";
  return undefined;
}

const text = (max: number) =>
  z.string().trim().min(1, "must not be empty").max(max, `must be at most ${max} characters`);
const optionalText = (max: number) =>
  text(max)
    .nullish()
    .transform((v) => v ?? null);
const flag = z
  .boolean()
  .nullish()
  .transform((v) => v ?? false);
const choices = z
  .array(text(200))
  .max(MAX_CHOICES, `at most ${MAX_CHOICES} choices`)
  .nullish()
  .transform((v) => [...new Set(v ?? [])]);
const format = z
  .enum(INPUT_FORMATS)
  .nullish()
  .transform((v) => v ?? "STRING");

/** What a variable (an environment variable, a header) and an argument share: server.json's Input, without a secret's value. */
const input = {
  description: optionalText(500),
  isRequired: flag,
  isSecret: flag,
  format,
  default: optionalText(500),
  placeholder: optionalText(200),
  choices,
};

/** A default is a value: a secret has none here, whatever its owner typed. */
function noSecretValue(value: { isSecret: boolean; default: string | null }, ctx: z.RefinementCtx, key = "default") {
  if (value.isSecret && value.default !== null) {
    ctx.addIssue({
      code: "custom",
      path: [key],
      message: "must not be set on a secret: the registry keeps no secret's value",
    });
  }
}

/** An environment variable, an HTTP header or a URL's variable a client sets: a name and what it is for, never its value. */
export const variableSchema = z
  .object({
    name: z
      .string()
      .trim()
      .regex(/^[A-Za-z_][A-Za-z0-9_-]{0,127}$/, "must be 1–128 of A-Z a-z 0-9 _ -, not starting with a digit or -"),
    ...input,
  })
  .strict()
  .superRefine((v, ctx) => noSecretValue(v, ctx));

/** A command-line argument: `--flag value` (NAMED) or a value in place (POSITIONAL). */
const argument = z
  .object({
    type: z.enum(ARGUMENT_KINDS),
    name: z
      .string()
      .trim()
      .regex(/^[^\s<>$]{1,100}$/, "must be 1–100 characters without spaces, < > or $")
      .nullish()
      .transform((v) => v ?? null),
    valueHint: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_.-]{1,100}$/, "must be 1–100 of A-Z a-z 0-9 _ . -")
      .nullish()
      .transform((v) => v ?? null),
    value: optionalText(500),
    isRepeated: flag,
    ...input,
  })
  .strict()
  .superRefine((a, ctx) => {
    noSecretValue(a, ctx);
    noSecretValue({ isSecret: a.isSecret, default: a.value }, ctx, "value");
    if (a.type === "NAMED" && a.name === null)
      ctx.addIssue({ code: "custom", path: ["name"], message: "is required for a NAMED argument" });
    if (a.type === "POSITIONAL" && a.name !== null) {
      ctx.addIssue({
        code: "custom",
        path: ["name"],
        message: "is for NAMED arguments; a POSITIONAL one has a valueHint",
      });
    }
    if (a.type === "POSITIONAL" && a.valueHint === null && a.value === null) {
      ctx.addIssue({
        code: "custom",
        path: ["valueHint"],
        message: "is required for a POSITIONAL argument without a value",
      });
    }
  });

/** A list of variables, at most MAX_VARIABLES; absent or null is none. */
export const variables = (what: string) =>
  z
    .array(variableSchema)
    .max(MAX_VARIABLES, `at most ${MAX_VARIABLES} ${what}`)
    .nullish()
    .transform((v) => v ?? []);

const urlTemplate = z
  .string()
  .trim()
  .max(2048, "must be at most 2048 characters")
  .refine((url) => {
    // Variables in braces are filled by the client (a port after the host's colon): the rest must be an http(s) URL.
    const filled = url.replace(/:\{[^{}\s]+\}/g, ":8080").replace(/\{[^{}\s]+\}/g, "x");
    return /^https?:\/\/[^\s/?#]/.test(filled) && URL.canParse(filled);
  }, "must be an http: or https: URL; {name} marks a value the client fills in");

const transport = z
  .object({
    type: z.enum(PACKAGE_TRANSPORTS),
    url: urlTemplate.nullish().transform((v) => v ?? null),
    headers: variables("headers"),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.type === "STDIO" && t.url !== null)
      ctx.addIssue({ code: "custom", path: ["url"], message: "must not be set for STDIO" });
    if (t.type === "STDIO" && t.headers.length) {
      ctx.addIssue({ code: "custom", path: ["headers"], message: "must not be set for STDIO" });
    }
    if (t.type !== "STDIO" && t.url === null)
      ctx.addIssue({ code: "custom", path: ["url"], message: `is required for ${t.type}` });
  });

/** Flags the second of two items with the same key, at `[...path, index, field]`. */
export function noDuplicate<T>(
  items: T[],
  key: (item: T) => string | null,
  ctx: z.RefinementCtx,
  path: string[],
  field: string,
  what = field,
) {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    const k = key(item);
    if (k === null) return;
    if (seen.has(k)) {
      ctx.addIssue({ code: "custom", path: [...path, index, field], message: `duplicate ${what} "${k}"` });
    }
    seen.add(k);
  });
}

const arguments_ = (what: string) =>
  z
    .array(argument)
    .max(MAX_ARGUMENTS, `at most ${MAX_ARGUMENTS} ${what}`)
    .nullish()
    .transform((v) => v ?? []);

export const packageSchema = z
  .object({
    registryType: z.enum(PACKAGE_REGISTRIES),
    registryBaseUrl: z
      .string()
      .trim()
      .max(2048)
      .refine((u) => /^https:\/\/[^\s/?#]/.test(u) && URL.canParse(u), "must be an absolute https: URL")
      .nullish()
      .transform((v) => v ?? null),
    identifier: text(1024),
    version: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(255, "must be at most 255 characters")
      .nullish()
      .transform((v) => v ?? null),
    fileSha256: z
      .string()
      .trim()
      .regex(SHA256_HEX, "must be 64 lower-case hexadecimal digits")
      .nullish()
      .transform((v) => v ?? null),
    runtimeHint: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/, "must be a command name such as npx, uvx, docker or dnx")
      .nullish()
      .transform((v) => v ?? null),
    transport,
    environmentVariables: variables("environment variables"),
    runtimeArguments: arguments_("runtime arguments"),
    packageArguments: arguments_("package arguments"),
  })
  .strict()
  .superRefine((p, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    const problem = identifierProblem(p.registryType, p.identifier);
    if (problem) issue("identifier", problem);
    const needsVersion = p.registryType !== "OCI" && p.registryType !== "MCPB";
    if (needsVersion && p.version === null) issue("version", `is required for ${p.registryType} packages`);
    if (p.registryType === "OCI" && p.version !== null)
      issue("version", "must not be set for OCI: the identifier's tag pins it");
    const badVersion = p.version === null ? undefined : versionProblem(p.version);
    if (badVersion) issue("version", badVersion);
    if (DEFAULT_REGISTRY_URLS[p.registryType] === null && p.registryBaseUrl !== null) {
      issue("registryBaseUrl", `must not be set for ${p.registryType}: the identifier says where it is`);
    }
    if (p.registryType === "MCPB" && p.fileSha256 === null)
      issue("fileSha256", "is required for MCPB: clients check the bundle with it");
    if (p.registryType !== "MCPB" && p.fileSha256 !== null) issue("fileSha256", "is only for MCPB bundles");
    noDuplicate(p.environmentVariables, (v) => v.name, ctx, ["environmentVariables"], "name");
    noDuplicate(p.transport.headers, (v) => v.name.toLowerCase(), ctx, ["transport", "headers"], "name", "header");
    // A URL's {name} must be something the client is told to fill in.
    const fillable = new Set([
      ...p.environmentVariables.map((v) => v.name),
      ...[...p.runtimeArguments, ...p.packageArguments].flatMap((a) => [a.name, a.valueHint].filter((n) => n !== null)),
    ]);
    for (const [, name] of (p.transport.url ?? "").matchAll(/\{([^{}]+)\}/g)) {
      if (!fillable.has(name as string)) {
        ctx.addIssue({
          code: "custom",
          path: ["transport", "url"],
          message: `{${name}} names no environment variable or argument of this package`,
        });
      }
    }
  });

export const packagesSchema = z
  .array(packageSchema)
  .max(MAX_PACKAGES, `at most ${MAX_PACKAGES} packages`)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((p, index) => {
      const key = `${p.registryType} ${p.identifier} ${p.version ?? ""}`;
      if (seen.has(key))
        ctx.addIssue({ code: "custom", path: [index, "identifier"], message: "the same package is listed twice" });
      seen.add(key);
    });
  });

export type Package = z.output<typeof packageSchema>;
export type PackageVariable = Package["environmentVariables"][number];
export type PackageArgument = Package["runtimeArguments"][number];

/** The command each registry's packages are usually started with, when a package names none. */
const RUNTIMES: Record<PackageRegistry, string | null> = {
  NPM: "npx",
  PYPI: "uvx",
  OCI: "docker",
  NUGET: "dnx",
  MCPB: null,
  CARGO: null,
};

/** An argument as it appears on a command line; a value the user supplies shows as `<name>`. */
function argumentWords(a: PackageArgument): string[] {
  const given = a.value ?? a.default;
  const hole = `<${a.valueHint ?? a.name?.replace(/^-+/, "") ?? "value"}>`;
  if (a.type === "POSITIONAL") return given !== null || a.isRequired ? [given ?? hole] : [];
  if (given !== null) return [a.name as string, given];
  if (!a.isRequired) return [];
  return a.format === "BOOLEAN" ? [a.name as string] : [a.name as string, hole];
}

/** A word as a POSIX shell reads it: quoted when it holds anything but plain characters (a `<hole>` stays as it is). */
function shellWord(word: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(word) || /^<[A-Za-z0-9_.-]+>$/.test(word)
    ? word
    : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The command line that starts a package, as its registry's usual runtime takes it (`npx -y
 * @scope/name@1.2.3`, `uvx name==1.2.3`, `docker run -i --rm -e KEY image:tag`, `dnx Name@1.0.0
 * --yes`); null for an MCPB bundle, which a client downloads and checks against its hash first,
 * and for a crate, which has no runner that starts it in one step (`cargo install` first).
 * Values the user supplies show as `<name>`; environment variables are set around the command.
 */
export function runCommand(p: Package): string | null {
  const runtime = p.runtimeHint ?? RUNTIMES[p.registryType];
  if (runtime === null) return null;
  const runtimeArgs = p.runtimeArguments.flatMap(argumentWords);
  const packageArgs = p.packageArguments.flatMap(argumentWords);
  const words = (() => {
    switch (p.registryType) {
      case "NPM":
        return [runtime, ...(runtimeArgs.length ? runtimeArgs : ["-y"]), `${p.identifier}@${p.version}`];
      case "PYPI":
        return [runtime, ...runtimeArgs, `${p.identifier}==${p.version}`];
      case "NUGET":
        return [runtime, ...runtimeArgs, `${p.identifier}@${p.version}`, "--yes"];
      case "OCI":
        return [
          runtime,
          "run",
          ...(runtimeArgs.length ? runtimeArgs : ["-i", "--rm"]),
          ...p.environmentVariables.flatMap((v) => ["-e", v.name]),
          p.identifier,
        ];
      default:
        return [runtime, ...runtimeArgs, p.identifier];
    }
  })();
  return [...words, ...packageArgs].map(shellWord).join(" ");
}
