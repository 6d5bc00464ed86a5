/**
 * `npm run keys:rotate`: rotates the registry's signing keys (signing.rotate.ts). On the key file
 * (SIGNING_KEYS_FILE, by default in the data folder) it rewrites the file, and running replicas
 * pick it up within seconds. With SIGNING_KEYS set, the keys live in the deployment's
 * configuration, which this command cannot change: it prints the rotated set for the operator to
 * deploy in place of the current value.
 */
import { loadConfig } from "../config.ts";
import { type Rotation, rotateInline, rotateKeyFile } from "./signing.rotate.ts";

const config = loadConfig();
const { signingKeys, signingKeysFile, signingKeyGraceDays: graceDays } = config.trust;

function summary(rotation: Rotation): string[] {
  return [
    `new signing keys (sign from now on): ${rotation.newKids.join(", ")}`,
    rotation.retiredKids.length
      ? `rotated out, published until ${rotation.retiresAt} (SIGNING_KEY_GRACE_DAYS=${graceDays}): ${rotation.retiredKids.join(", ")}`
      : "no key was signing before",
    ...(rotation.prunedKids.length ? [`pruned (grace period over): ${rotation.prunedKids.join(", ")}`] : []),
  ];
}

try {
  if (signingKeys !== undefined) {
    const rotation = rotateInline(signingKeys, { graceDays });
    // The set goes to stdout alone, so it can be piped into a secret store; the explanation to stderr.
    console.error(
      [
        "SIGNING_KEYS is set: the keys are part of the deployment's configuration, so nothing was changed.",
        "Deploy the JWK set printed below as the new SIGNING_KEYS value (to every replica); it holds private keys, keep it secret.",
        ...summary(rotation),
      ].join("\n"),
    );
    console.log(JSON.stringify(rotation.set));
  } else {
    const rotation = rotateKeyFile(signingKeysFile, { graceDays });
    console.log([`rotated ${signingKeysFile}`, ...summary(rotation)].join("\n"));
  }
} catch (error) {
  console.error(`keys:rotate: ${(error as Error).message}`);
  process.exit(1);
}
