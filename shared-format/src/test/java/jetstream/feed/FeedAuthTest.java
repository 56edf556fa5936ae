package jetstream.feed;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("unit")
class FeedAuthTest {
    @TempDir
    Path dir;

    @Test
    void macIsHmacSha256OfTheNonce() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?"
        byte[] mac = FeedAuth.mac("Jefe".getBytes(StandardCharsets.US_ASCII),
                "what do ya want for nothing?".getBytes(StandardCharsets.US_ASCII));
        assertArrayEquals(HexFormat.of().parseHex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"), mac);
    }

    @Test
    void verifyAcceptsOnlyTheAnswerToThisNonce() {
        byte[] secret = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
        byte[] n1 = FeedAuth.nonce();
        byte[] n2 = FeedAuth.nonce();
        assertFalse(java.util.Arrays.equals(n1, n2));
        assertTrue(FeedAuth.verify(secret, n1, FeedAuth.mac(secret, n1)));
        assertFalse(FeedAuth.verify(secret, n2, FeedAuth.mac(secret, n1)), "a replayed answer");
        assertFalse(FeedAuth.verify(secret, n1, FeedAuth.mac("0123456789abcdeX".getBytes(), n1)), "another secret");
        assertFalse(FeedAuth.verify(secret, n1, new byte[0]));
    }

    @Test
    void secretFromEnvOrFileNeverBoth() throws Exception {
        assertNull(FeedAuth.loadSecret("", ""));
        assertArrayEquals("0123456789abcdef".getBytes(), FeedAuth.loadSecret("0123456789abcdef", null));
        Path f = dir.resolve("secret");
        Files.writeString(f, "0123456789abcdef\n");
        assertArrayEquals("0123456789abcdef".getBytes(), FeedAuth.loadSecret(null, f.toString()), "newline stripped");
        assertThrows(IllegalArgumentException.class, () -> FeedAuth.loadSecret("0123456789abcdef", f.toString()));
        assertThrows(IllegalArgumentException.class, () -> FeedAuth.loadSecret("short", ""));
    }
}
