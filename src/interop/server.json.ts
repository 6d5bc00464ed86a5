/**
 * A provider as an MCP registry `server.json` (schema 2025-12-11), and the spellings both
 * directions share: server.json writes enumerations in lower case (`npm`, `streamable-http`,
 * `named`), the profile in GraphQL's upper case. Pure: no database, no network. What the import
 * maps (import.ts) is exactly what this writes back, so a document survives the round trip but
 * for the pointers the import reported as having no home (docs/architecture.md, "server.json both ways").
 */
import type { Package, PackageArgument, PackageVariable } from "../providers/package.rules.ts";
import type { Profile } from "../providers/provider.rules.ts";

export const SERVER_SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
/** server.json caps `description` (and `title`) at this many characters. */
export const SERVER_DESCRIPTION_MAX = 100;

type Json = Record<string, unknown>;

/** `STREAMABLE_HTTP` ⇄ `streamable-http`, `NPM` ⇄ `npm`, … */
export const toServerJson = (value: string) => value.toLowerCase().replaceAll("_", "-");
export const fromServerJson = (value: string) => value.toUpperCase().replaceAll("-", "_");

/**
 * The namespace of the names the registry gives servers that declare none: its host, reversed
 * (`registry.example.com` → `com.example.registry`), as the MCP registry names servers by domain.
 */
export function registryNamespace(base: string): string {
  return new URL(base).hostname
    .replace(/^\[|\]$/g, "")
    .replaceAll(":", "-")
    .split(".")
    .reverse()
    .join(".");
}

/** The part of a server name after its namespace: what a server is called when it has no title. */
export function shortName(serverName: string): string {
  return serverName.slice(serverName.indexOf("/") + 1);
}

/** What the registry says of a server that states no release of its own: its profile version. */
export function derivedReleaseVersion(profileVersion: number): string {
  return `${profileVersion}.0.0`;
}

/** The members of an object whose value says something: not null, not an empty list, not a default. */
function present(members: Json): Json {
  return Object.fromEntries(
    Object.entries(members).filter(
      ([, v]) => v !== null && v !== undefined && v !== false && !(Array.isArray(v) && !v.length),
    ),
  );
}

function input(v: Omit<PackageVariable, "name">): Json {
  return present({
    description: v.description,
    isRequired: v.isRequired,
    isSecret: v.isSecret,
    format: v.format === "STRING" ? null : toServerJson(v.format),
    default: v.default,
    placeholder: v.placeholder,
    choices: v.choices,
  });
}

const variable = (v: PackageVariable): Json => ({ name: v.name, ...input(v) });

function argument(a: PackageArgument): Json {
  return present({
    type: toServerJson(a.type),
    name: a.name,
    valueHint: a.valueHint,
    value: a.value,
    isRepeated: a.isRepeated,
    ...input(a),
  });
}

function packageOf(p: Package): Json {
  return present({
    registryType: toServerJson(p.registryType),
    registryBaseUrl: p.registryBaseUrl,
    identifier: p.identifier,
    version: p.version,
    fileSha256: p.fileSha256,
    runtimeHint: p.runtimeHint,
    transport: present({
      type: toServerJson(p.transport.type),
      url: p.transport.url,
      headers: p.transport.headers.map(variable),
    }),
    runtimeArguments: p.runtimeArguments.map(argument),
    packageArguments: p.packageArguments.map(argument),
    environmentVariables: p.environmentVariables.map(variable),
  });
}

const BEARER_HEADER: PackageVariable = {
  name: "Authorization",
  description: "Bearer token",
  isRequired: true,
  isSecret: true,
  format: "STRING",
  default: null,
  placeholder: null,
  choices: [],
};

/** An MCP endpoint as a remote; a bearer token is an Authorization header when the endpoint lists none. */
function remoteOf(endpoint: NonNullable<Profile["endpoint"]>): Json {
  const headers = endpoint.headers.length || endpoint.authScheme !== "BEARER" ? endpoint.headers : [BEARER_HEADER];
  return present({
    type: toServerJson(endpoint.transport ?? "STREAMABLE_HTTP"),
    url: endpoint.url,
    headers: headers.map(variable),
    variables: endpoint.variables.length
      ? Object.fromEntries(endpoint.variables.map(({ name, ...v }) => [name, input(v)]))
      : null,
  });
}

/** The one line server.json describes a server in: the description when it is that short, else the summary, cut. */
function descriptionOf(profile: Profile): string {
  if (profile.description && profile.description.length <= SERVER_DESCRIPTION_MAX) return profile.description;
  const line = profile.summary;
  return line.length <= SERVER_DESCRIPTION_MAX ? line : `${line.slice(0, SERVER_DESCRIPTION_MAX - 1).trimEnd()}…`;
}

/**
 * The server.json of a provider. Its name is the declared `serverName`, else `<the registry's
 * namespace>/<providerCode>`; its version the declared `releaseVersion`, else the profile version as
 * `N.0.0`. An endpoint is a remote only when it speaks MCP; packages are written member for member.
 */
export function serverJsonOf(provider: Profile & { providerCode: string; version: number }, base: string): Json {
  const name = provider.serverName ?? `${registryNamespace(base)}/${provider.providerCode}`;
  const title = provider.name === shortName(name) ? null : provider.name.slice(0, SERVER_DESCRIPTION_MAX);
  const repository = provider.repository;
  return present({
    $schema: SERVER_SCHEMA_URL,
    name,
    title,
    description: descriptionOf(provider),
    version: provider.releaseVersion ?? derivedReleaseVersion(provider.version),
    websiteUrl: provider.homepageUrl,
    repository: repository && present({ ...repository }),
    remotes: provider.endpoint?.protocol === "MCP" ? [remoteOf(provider.endpoint)] : [],
    packages: provider.packages.map(packageOf),
  });
}
