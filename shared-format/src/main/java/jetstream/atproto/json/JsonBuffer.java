package jetstream.atproto.json;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import jetstream.atproto.cbor.Utf8;
import jetstream.atproto.cid.Base32;
import jetstream.atproto.cid.Base58;

/**
 * A reusable growable byte buffer for writing JSON text, with string escaping identical to Go's
 * {@code encoding/json} (what Jetstream's wire output is made of): quote, backslash and the control
 * characters b, f, n, r, t get two-character escapes; other control characters, {@code <},
 * {@code >}, {@code &}, U+2028 and U+2029 become six-character "backslash u" escapes with lowercase
 * hex; everything else is raw UTF-8. Not thread-safe; {@link #reset()} between messages.
 */
public final class JsonBuffer {
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".getBytes(StandardCharsets.US_ASCII);
    /** Per ASCII byte: 0 = copy as is, 'u' = \\u00XX, otherwise the character after the backslash. */
    private static final byte[] ESCAPE = new byte[128];
    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);
    /** Bytes copied verbatim: ASCII that needs no escape. */
    private static final boolean[] PLAIN = new boolean[256];

    static {
        for (int c = 0; c < 0x20; c++) {
            ESCAPE[c] = 'u';
        }
        ESCAPE['\b'] = 'b';
        ESCAPE['\f'] = 'f';
        ESCAPE['\n'] = 'n';
        ESCAPE['\r'] = 'r';
        ESCAPE['\t'] = 't';
        ESCAPE['"'] = '"';
        ESCAPE['\\'] = '\\';
        ESCAPE['<'] = 'u';
        ESCAPE['>'] = 'u';
        ESCAPE['&'] = 'u';
        for (int c = 0; c < 128; c++) {
            PLAIN[c] = ESCAPE[c] == 0;
        }
    }

    private byte[] buf;
    private int len;

    public JsonBuffer() {
        this(1024);
    }

    public JsonBuffer(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
    }

    public JsonBuffer reset() {
        len = 0;
        return this;
    }

    public int length() {
        return len;
    }

    /** Truncates to {@code newLength} (&lt;= length()), e.g. to undo a failed partial write. */
    public void setLength(int newLength) {
        if (newLength < 0 || newLength > len) {
            throw new IndexOutOfBoundsException("length " + newLength + " outside [0, " + len + "]");
        }
        len = newLength;
    }

    /** The backing array; valid bytes are {@code [0, length())}. */
    public byte[] array() {
        return buf;
    }

    public byte[] toByteArray() {
        return Arrays.copyOf(buf, len);
    }

    @Override
    public String toString() {
        return new String(buf, 0, len, StandardCharsets.UTF_8);
    }

    /** Makes room for {@code extra} more bytes. */
    public void ensure(int extra) {
        if (extra > buf.length - len) {
            long want = Math.max((long) buf.length * 2, (long) len + extra);
            if (want > Integer.MAX_VALUE - 8) {
                throw new IllegalStateException("JSON output larger than 2 GiB");
            }
            buf = Arrays.copyOf(buf, (int) want);
        }
    }

    public JsonBuffer append(byte b) {
        ensure(1);
        buf[len++] = b;
        return this;
    }

    public JsonBuffer append(byte[] b, int off, int n) {
        ensure(n);
        System.arraycopy(b, off, buf, len, n);
        len += n;
        return this;
    }

    /** Appends characters that are plain ASCII and need no escaping (punctuation, literals, key names known to be safe). */
    public JsonBuffer appendAscii(String s) {
        int n = s.length();
        ensure(n);
        for (int i = 0; i < n; i++) {
            buf[len++] = (byte) s.charAt(i);
        }
        return this;
    }

    public JsonBuffer appendLong(long v) {
        if (v == Long.MIN_VALUE) {
            return appendAscii("-9223372036854775808");
        }
        ensure(20);
        if (v < 0) {
            buf[len++] = '-';
            v = -v;
        }
        int digits = 1;
        for (long t = v; t >= 10; t /= 10) {
            digits++;
        }
        int end = len + digits;
        for (int p = end - 1; p >= len; p--) {
            buf[p] = (byte) ('0' + (int) (v % 10));
            v /= 10;
        }
        len = end;
        return this;
    }

    public JsonBuffer appendBoolean(boolean v) {
        return appendAscii(v ? "true" : "false");
    }

    /** Appends {@code s} as a quoted, escaped JSON string. Lone surrogates become an escaped U+FFFD (as Go does for invalid UTF-8). */
    public JsonBuffer appendString(String s) {
        int n = s.length();
        ensure(n * 6 + 2);
        byte[] d = buf;
        int o = len;
        d[o++] = '"';
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                byte e = ESCAPE[c];
                if (e == 0) {
                    d[o++] = (byte) c;
                } else {
                    o = escape(d, o, c, e);
                }
            } else if (c < 0x800) {
                d[o++] = (byte) (0xc0 | (c >> 6));
                d[o++] = (byte) (0x80 | (c & 0x3f));
            } else if (c == 0x2028 || c == 0x2029) {
                o = unicodeEscape(d, o, c);
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                d[o++] = (byte) (0xf0 | (cp >> 18));
                d[o++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
                d[o++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
                d[o++] = (byte) (0x80 | (cp & 0x3f));
            } else if (Character.isSurrogate(c)) {
                o = unicodeEscape(d, o, 0xfffd);
            } else {
                d[o++] = (byte) (0xe0 | (c >> 12));
                d[o++] = (byte) (0x80 | ((c >> 6) & 0x3f));
                d[o++] = (byte) (0x80 | (c & 0x3f));
            }
        }
        d[o++] = '"';
        len = o;
        return this;
    }

    /**
     * Appends the UTF-8 text {@code src[off, off+n)} as a quoted, escaped JSON string, checking the
     * UTF-8 in the same pass.
     *
     * @throws jetstream.atproto.DecodeException {@code bad_utf8} if the bytes are not well-formed UTF-8
     */
    public JsonBuffer appendUtf8String(byte[] src, int off, int n) {
        return appendUtf8(src, off, n, true);
    }

    /** As {@link #appendUtf8String} for bytes already checked (e.g. map keys the CBOR reader validated). */
    JsonBuffer appendCheckedUtf8String(byte[] src, int off, int n) {
        return appendUtf8(src, off, n, false);
    }

    private JsonBuffer appendUtf8(byte[] src, int off, int n, boolean validate) {
        ensure(n * 6 + 2);
        byte[] d = buf;
        int o = len;
        d[o++] = '"';
        int i = off;
        int end = off + n;
        while (true) {
            int runStart = i;
            while (end - i >= 8 && allPlain((long) LONGS.get(src, i))) {
                i += 8;
            }
            while (i < end && PLAIN[src[i] & 0xff]) {
                i++;
            }
            if (i > runStart) {
                System.arraycopy(src, runStart, d, o, i - runStart);
                o += i - runStart;
            }
            if (i >= end) {
                break;
            }
            int c = src[i];
            if (c >= 0) {
                o = escape(d, o, c, ESCAPE[c]);
                i++;
                continue;
            }
            int next = validate ? Utf8.validateSequence(src, i, end) : i + sequenceLength(c);
            if (c == (byte) 0xe2 && src[i + 1] == (byte) 0x80 && (src[i + 2] == (byte) 0xa8 || src[i + 2] == (byte) 0xa9)) {
                o = unicodeEscape(d, o, src[i + 2] == (byte) 0xa8 ? 0x2028 : 0x2029);
            } else {
                while (i < next) {
                    d[o++] = src[i++];
                }
            }
            i = next;
        }
        d[o++] = '"';
        len = o;
        return this;
    }

    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;

    /**
     * Whether all 8 bytes of {@code x} are plain ASCII (no high bit, no control, none of quote,
     * backslash, less-than, greater-than, ampersand). May answer false for a plain word (borrows),
     * never true for one that is not, so the bytewise loop after it stays exact.
     */
    private static boolean allPlain(long x) {
        long special = (x & HIGHS)
                | ((x - 0x20 * ONES) & ~x & HIGHS)
                | zeroByte(x ^ ('"' * ONES))
                | zeroByte(x ^ ('\\' * ONES))
                | zeroByte(x ^ ('<' * ONES))
                | zeroByte(x ^ ('>' * ONES))
                | zeroByte(x ^ ('&' * ONES));
        return special == 0;
    }

    private static long zeroByte(long v) {
        return (v - ONES) & ~v & HIGHS;
    }

    private static int sequenceLength(int lead) {
        int b = lead & 0xff;
        return b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    }

    private static int escape(byte[] d, int o, int c, byte e) {
        if (e == 'u') {
            return unicodeEscape(d, o, c);
        }
        d[o++] = '\\';
        d[o++] = e;
        return o;
    }

    private static int unicodeEscape(byte[] d, int o, int c) {
        d[o++] = '\\';
        d[o++] = 'u';
        d[o++] = HEX[(c >> 12) & 15];
        d[o++] = HEX[(c >> 8) & 15];
        d[o++] = HEX[(c >> 4) & 15];
        d[o++] = HEX[c & 15];
        return o;
    }

    /** Appends {@code src[off, off+n)} as standard base64 without padding (the {@code $bytes} form), unquoted. */
    public JsonBuffer appendBase64(byte[] src, int off, int n) {
        ensure((n + 2) / 3 * 4);
        byte[] d = buf;
        int o = len;
        int i = off;
        int end = off + n;
        while (end - i >= 3) {
            int v = (src[i] & 0xff) << 16 | (src[i + 1] & 0xff) << 8 | (src[i + 2] & 0xff);
            d[o++] = BASE64[v >>> 18];
            d[o++] = BASE64[(v >>> 12) & 63];
            d[o++] = BASE64[(v >>> 6) & 63];
            d[o++] = BASE64[v & 63];
            i += 3;
        }
        if (end - i == 1) {
            int v = (src[i] & 0xff) << 16;
            d[o++] = BASE64[v >>> 18];
            d[o++] = BASE64[(v >>> 12) & 63];
        } else if (end - i == 2) {
            int v = (src[i] & 0xff) << 16 | (src[i + 1] & 0xff) << 8;
            d[o++] = BASE64[v >>> 18];
            d[o++] = BASE64[(v >>> 12) & 63];
            d[o++] = BASE64[(v >>> 6) & 63];
        }
        len = o;
        return this;
    }

    /** Appends the string form of the binary CID {@code bin[off, off+n)} (structure already checked), unquoted. */
    public JsonBuffer appendCid(byte[] bin, int off, int n) {
        if (bin[off] == 1) {
            ensure(1 + Base32.encodedLength(n));
            buf[len++] = 'b';
            len += Base32.encode(bin, off, n, buf, len);
            return this;
        }
        return appendAscii(Base58.encode(bin, off, n));
    }
}
