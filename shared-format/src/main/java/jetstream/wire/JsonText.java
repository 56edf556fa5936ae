package jetstream.wire;

import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.json.JsonBuffer;

/**
 * Pieces shared by the v1 and v2 encoders: record CIDs, v2 timestamps, and the escaping variant of
 * lexicon-generated JSON. Holds reusable scratch space; not thread-safe.
 */
final class JsonText {
    private final MessageDigest sha256;
    private final byte[] cid = new byte[Cid.SHA256_V1_BYTES];

    JsonText() {
        try {
            sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JVM", e);
        }
        cid[0] = 1;
        cid[1] = (byte) Cid.CODEC_DAG_CBOR;
        cid[2] = (byte) Cid.HASH_SHA2_256;
        cid[3] = 0x20;
    }

    /** The quoted record CID (CIDv1 dag-cbor sha2-256) of a payload; records are not stored with theirs. */
    void appendRecordCid(byte[] payload, int off, int len, JsonBuffer out) {
        sha256.update(payload, off, len);
        try {
            sha256.digest(cid, 4, 32);
        } catch (DigestException e) {
            throw new IllegalStateException(e);
        }
        out.append((byte) '"');
        out.appendCid(cid, 0, cid.length);
        out.append((byte) '"');
    }

    /**
     * A string as lexicon-generated code writes it: like Go's encoding/json except that U+2028 and
     * U+2029 stay raw. Used for every v2 string outside {@code record}.
     */
    static void appendLexString(String s, JsonBuffer out) {
        int start = out.length();
        out.appendString(s);
        if (s.indexOf('\u2028') >= 0 || s.indexOf('\u2029') >= 0) {
            unescapeLineSeparators(out, start);
        }
    }

    /** The UTF-8 bytes {@code src[off, off+len)} as {@link #appendLexString(String, JsonBuffer)} writes them. */
    static void appendLexString(byte[] src, int off, int len, JsonBuffer out) {
        int start = out.length();
        out.appendUtf8String(src, off, len);
        for (int i = off; i + 2 < off + len; i++) {
            if (src[i] == (byte) 0xe2 && src[i + 1] == (byte) 0x80 && (src[i + 2] & 0xfe) == 0xa8) {
                unescapeLineSeparators(out, start);
                return;
            }
        }
    }

    /** Turns the {@code \u2028}/{@code \u2029} escapes written since {@code start} back into raw UTF-8. */
    private static void unescapeLineSeparators(JsonBuffer out, int start) {
        byte[] b = out.array();
        int end = out.length();
        int w = start;
        int i = start;
        while (i < end) {
            if (b[i] != '\\') {
                b[w++] = b[i++];
            } else if (i + 5 < end && b[i + 1] == 'u' && b[i + 2] == '2' && b[i + 3] == '0' && b[i + 4] == '2'
                    && (b[i + 5] == '8' || b[i + 5] == '9')) {
                b[w++] = (byte) 0xe2;
                b[w++] = (byte) 0x80;
                b[w++] = (byte) (b[i + 5] == '8' ? 0xa8 : 0xa9);
                i += 6;
            } else {
                b[w++] = b[i++];
                b[w++] = b[i++];
            }
        }
        out.setLength(w);
    }

    /**
     * The quoted v2 display time: UTC, exactly six fractional digits,
     * {@code "YYYY-MM-DDThh:mm:ss.ffffffZ"}.
     */
    static void appendMicrosTime(long micros, JsonBuffer out) {
        long secs = Math.floorDiv(micros, 1_000_000L);
        int frac = (int) Math.floorMod(micros, 1_000_000L);
        long days = Math.floorDiv(secs, 86_400L);
        int sod = (int) Math.floorMod(secs, 86_400L);
        // Civil date from days since 1970-01-01 (proleptic Gregorian, 400-year eras).
        long z = days + 719_468;
        long era = Math.floorDiv(z, 146_097);
        long doe = z - era * 146_097;
        long yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        long mp = (5 * doy + 2) / 153;
        int day = (int) (doy - (153 * mp + 2) / 5 + 1);
        int month = (int) (mp < 10 ? mp + 3 : mp - 9);
        long year = yoe + era * 400 + (month <= 2 ? 1 : 0);
        out.append((byte) '"');
        if (year >= 0 && year < 1000) {
            pad(out, year, 4);
        } else {
            out.appendLong(year);
        }
        out.append((byte) '-');
        pad(out, month, 2);
        out.append((byte) '-');
        pad(out, day, 2);
        out.append((byte) 'T');
        pad(out, sod / 3600, 2);
        out.append((byte) ':');
        pad(out, sod / 60 % 60, 2);
        out.append((byte) ':');
        pad(out, sod % 60, 2);
        out.append((byte) '.');
        pad(out, frac, 6);
        out.appendAscii("Z\"");
    }

    private static void pad(JsonBuffer out, long v, int width) {
        for (long p = pow10(width - 1); p > 1 && v < p; p /= 10) {
            out.append((byte) '0');
        }
        out.appendLong(v);
    }

    private static long pow10(int n) {
        long p = 1;
        for (int i = 0; i < n; i++) {
            p *= 10;
        }
        return p;
    }
}
