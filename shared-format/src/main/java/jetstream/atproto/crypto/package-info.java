/**
 * atproto signing keys (secp256k1, P-256): parsing multibase public keys, verifying low-S compact
 * signatures, deterministic (RFC 6979) signing for the simulator and tests, SHA-256 per thread, and the
 * parts of a DID document atproto uses. May depend on {@code jetstream.atproto}, BouncyCastle and Jackson.
 */
package jetstream.atproto.crypto;
