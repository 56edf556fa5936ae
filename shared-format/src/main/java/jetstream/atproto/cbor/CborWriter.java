package jetstream.atproto.cbor;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import jetstream.atproto.cid.Cid;

/**
 * Appends DAG-CBOR items to a growable, reusable buffer, always in the shortest encoding. The
 * caller emits map keys in canonical order ({@link DagCbor#encode} does it for trees). Not
 * thread-safe.
 */
public final class CborWriter {
    private byte[] buf;
    private int len;

    public CborWriter() {
        this(256);
    }

    public CborWriter(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
    }

    public CborWriter reset() {
        len = 0;
        return this;
    }

    public int size() {
        return len;
    }

    /** The backing array; valid bytes are {@code [0, size())}. */
    public byte[] array() {
        return buf;
    }

    public byte[] toByteArray() {
        return Arrays.copyOf(buf, len);
    }

    private void ensure(int extra) {
        if (len + extra > buf.length) {
            long want = Math.max((long) buf.length * 2, (long) len + extra);
            if (want > Integer.MAX_VALUE - 8) {
                throw new IllegalStateException("CBOR output larger than 2 GiB");
            }
            buf = Arrays.copyOf(buf, (int) want);
        }
    }

    private void header(int major, long arg) {
        ensure(9);
        int m = major << 5;
        if (arg >= 0 && arg < 24) {
            buf[len++] = (byte) (m | (int) arg);
        } else if (arg >= 0 && arg < 0x100) {
            buf[len++] = (byte) (m | 24);
            buf[len++] = (byte) arg;
        } else if (arg >= 0 && arg < 0x10000) {
            buf[len++] = (byte) (m | 25);
            buf[len++] = (byte) (arg >>> 8);
            buf[len++] = (byte) arg;
        } else if (arg >= 0 && arg < 0x1_0000_0000L) {
            buf[len++] = (byte) (m | 26);
            for (int s = 24; s >= 0; s -= 8) {
                buf[len++] = (byte) (arg >>> s);
            }
        } else {
            buf[len++] = (byte) (m | 27);
            for (int s = 56; s >= 0; s -= 8) {
                buf[len++] = (byte) (arg >>> s);
            }
        }
    }

    public CborWriter writeInt(long v) {
        if (v >= 0) {
            header(0, v);
        } else {
            header(1, -1 - v);
        }
        return this;
    }

    public CborWriter writeText(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return writeTextUtf8(b, 0, b.length);
    }

    /** Writes text whose UTF-8 bytes the caller guarantees are well-formed. */
    public CborWriter writeTextUtf8(byte[] b, int off, int n) {
        header(3, n);
        return writeRaw(b, off, n);
    }

    public CborWriter writeBytes(byte[] b) {
        return writeBytes(b, 0, b.length);
    }

    public CborWriter writeBytes(byte[] b, int off, int n) {
        header(2, n);
        return writeRaw(b, off, n);
    }

    public CborWriter writeLink(Cid cid) {
        int n = cid.binaryLength();
        ensure(2 + 9 + 1 + n);
        buf[len++] = (byte) 0xd8;
        buf[len++] = 42;
        header(2, n + 1);
        buf[len++] = 0;
        cid.writeTo(buf, len);
        len += n;
        return this;
    }

    public CborWriter writeArrayHeader(int n) {
        header(4, n);
        return this;
    }

    public CborWriter writeMapHeader(int n) {
        header(5, n);
        return this;
    }

    public CborWriter writeBool(boolean v) {
        ensure(1);
        buf[len++] = (byte) (v ? 0xf5 : 0xf4);
        return this;
    }

    public CborWriter writeNull() {
        ensure(1);
        buf[len++] = (byte) 0xf6;
        return this;
    }

    /** Appends bytes verbatim (e.g. an already-encoded item). */
    public CborWriter writeRaw(byte[] b, int off, int n) {
        ensure(n);
        System.arraycopy(b, off, buf, len, n);
        len += n;
        return this;
    }
}
