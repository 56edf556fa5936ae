package jetstream.simulator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.PrivateKey;
import jetstream.atproto.crypto.Sha256;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class BaseSignerTest {

    @Test
    void signaturesVerifyAcrossTheNonceTablesAndAreDeterministic() {
        for (KeyCurve curve : KeyCurve.values()) {
            BaseSigner signer = new BaseSigner(curve, 7);
            BaseSigner again = new BaseSigner(curve, 7);
            int[] indexes = {0, 1, 255, 256, 257, 65_535, 65_536, 1_000_000, 16_777_215, 16_777_216, Integer.MAX_VALUE, -1};
            for (int index : indexes) {
                PrivateKey key = PrivateKey.fromBytes(curve, Sha256.digest(("k" + index).getBytes(StandardCharsets.UTF_8)));
                byte[] msg = ("commit " + index).getBytes(StandardCharsets.UTF_8);
                byte[] sig = signer.sign(new BigInteger(1, key.toBytes()), index, msg);
                assertTrue(key.publicKey().verify(msg, sig), curve + " index " + index);
                assertArrayEquals(sig, again.sign(new BigInteger(1, key.toBytes()), index, msg), "deterministic");
                byte[] other = ("commit " + index + "!").getBytes(StandardCharsets.UTF_8);
                assertFalse(key.publicKey().verify(other, sig), "bound to the message");
            }
        }
    }

    @Test
    void datetimeMatchesTheIsoFormatter() {
        DateTimeFormatter iso = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
        long[] micros = {0, 999, 1_000, 1_699_999_999_999_999L, 1_767_225_599_123_456L, 946_684_800_000_000L, 59_999_999L};
        for (long m : micros) {
            assertEquals(iso.format(Instant.ofEpochSecond(Math.floorDiv(m, 1_000_000L), Math.floorMod(m, 1_000_000L) * 1000)),
                    Tids.datetime(m), "at " + m);
        }
    }
}
