package jetstream.simulator;

import java.time.LocalDateTime;
import java.time.ZoneOffset;

/** TIDs and atproto datetimes from the simulator's logical clock (microseconds since the epoch). */
final class Tids {
    private static final char[] ALPHABET = "234567abcdefghijklmnopqrstuvwxyz".toCharArray();

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

    /** {@code yyyy-MM-ddTHH:mm:ss.SSSZ} (years 0–9999), by hand: a DateTimeFormatter cost a twentieth of a getRepo. */
    static String datetime(long micros) {
        LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), 0, ZoneOffset.UTC);
        StringBuilder b = new StringBuilder(24);
        pad(b, t.getYear(), 4).append('-');
        pad(b, t.getMonthValue(), 2).append('-');
        pad(b, t.getDayOfMonth(), 2).append('T');
        pad(b, t.getHour(), 2).append(':');
        pad(b, t.getMinute(), 2).append(':');
        pad(b, t.getSecond(), 2).append('.');
        return pad(b, (int) (Math.floorMod(micros, 1_000_000L) / 1000), 3).append('Z').toString();
    }

    private static StringBuilder pad(StringBuilder b, int v, int width) {
        String s = Integer.toString(v);
        for (int i = s.length(); i < width; i++) {
            b.append('0');
        }
        return b.append(s);
    }
}
