/**
 * Frozen copies of replaced implementations, kept only as the "previous" side of a benchmark's old/new
 * pair in the same run (the 10×26-bit secp256k1 verifier for {@code VerifyBench} and {@code VerifyCpu}).
 * Never used outside the bench module. May depend on BouncyCastle.
 */
package jetstream.bench.baseline;
