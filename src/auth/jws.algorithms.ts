/**
 * The JWS algorithms taken from a key someone else holds (an identity provider's access tokens, an
 * agent card's signature): asymmetric only, so never `none`, and never a shared secret that a
 * public key could be passed off as.
 */
export const ASYMMETRIC_JWS_ALGORITHMS = [
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
];
