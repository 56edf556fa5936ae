package jetstream.feed;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The TCP feed's shared-secret handshake (docs/feed-protocol.md): the ingester sends a fresh random
 * nonce, the reader answers {@code HMAC-SHA256(secret, nonce)}. The secret never crosses the wire and
 * a recorded answer is worthless against the next nonce. Comparison is constant-time.
 */
public final class FeedAuth {
    public static final int NONCE_BYTES = 32;
    public static final int MAC_BYTES = 32;
    /** Shorter secrets are refused at startup: the HMAC is only as strong as the secret. */
    public static final int MIN_SECRET_BYTES = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private FeedAuth() {}

    public static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    public static byte[] mac(byte[] secret, byte[] nonce) {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(new SecretKeySpec(secret, "HmacSHA256"));
            return m.doFinal(nonce);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    /** Whether {@code mac} answers {@code nonce} under {@code secret}; constant-time in the mac bytes. */
    public static boolean verify(byte[] secret, byte[] nonce, byte[] mac) {
        return MessageDigest.isEqual(mac(secret, nonce), mac);
    }

    /**
     * The secret from {@code value} (an env var) or else from the file {@code file} (a mounted
     * Kubernetes Secret; one trailing newline is ignored); null when neither is set. Both set, or a
     * secret shorter than {@link #MIN_SECRET_BYTES}, is a configuration error.
     */
    public static byte[] loadSecret(String value, String file) throws IOException {
        boolean hasValue = value != null && !value.isEmpty();
        boolean hasFile = file != null && !file.isEmpty();
        if (hasValue && hasFile) {
            throw new IllegalArgumentException("set JETSTREAM_FEED_SECRET or JETSTREAM_FEED_SECRET_FILE, not both");
        }
        String s;
        if (hasValue) {
            s = value;
        } else if (hasFile) {
            s = Files.readString(Path.of(file), StandardCharsets.UTF_8);
            if (s.endsWith("\n")) {
                s = s.substring(0, s.length() - (s.endsWith("\r\n") ? 2 : 1));
            }
        } else {
            return null;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length < MIN_SECRET_BYTES) {
            throw new IllegalArgumentException("the feed secret has " + b.length + " bytes; at least "
                    + MIN_SECRET_BYTES + " are required");
        }
        return b;
    }
}
