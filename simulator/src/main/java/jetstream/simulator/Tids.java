package jetstream.simulator;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/** TIDs and atproto datetimes from the simulator's logical clock (microseconds since the epoch). */
final class Tids {
    private static final char[] ALPHABET = "234567abcdefghijklmnopqrstuvwxyz".toCharArray();
    private static final DateTimeFormatter ISO_MILLIS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private Tids() {}

    /** A TID for {@code micros} and a 10-bit clock id. */
    static String of(long micros, int clockId) {
        long v = (micros << 10) | (clockId & 0x3ff);
        v &= Long.MAX_VALUE;
        char[] out = new char[13];
        for (int i = 12; i >= 0; i--) {
            out[i] = ALPHABET[(int) (v & 31)];
            v >>>= 5;
        }
        return new String(out);
    }

    static String datetime(long micros) {
        return ISO_MILLIS.format(Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
                Math.floorMod(micros, 1_000_000L) * 1000L));
    }
}
