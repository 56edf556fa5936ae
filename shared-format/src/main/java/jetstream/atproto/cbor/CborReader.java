package jetstream.atproto.cbor;

import java.nio.charset.StandardCharsets;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;

/**
 * An allocation-free cursor over DAG-CBOR bytes, strict per the atproto data model: definite
 * lengths, minimal integer/length encodings, integers within int64, text keys in canonical order
 * (shorter first, then bytewise) without duplicates, tag 42 only (a byte string holding 0x00 and a
 * well-formed CID), no floats, no simple values other than false/true/null, UTF-8 checked text.
 *
 * <p>A declared length or element count larger than what remains of the input is rejected before
 * anything is read, so a hostile header cannot make a caller allocate. Every failure is a
 * {@link DecodeException}. Not thread-safe; {@link #reset} reuses an instance.
 *
 * <p>Variable-length reads ({@link #readText()}, {@link #readBytes()}, {@link #readLink()}) return
 * the payload length and leave its offset in {@link #lastOffset()}.
 */
public final class CborReader {
    /** Container nesting bound used when none is given. */
    public static final int DEFAULT_MAX_DEPTH = 64;

    public static final int KIND_INT = 1;
    public static final int KIND_BYTES = 2;
    public static final int KIND_TEXT = 3;
    public static final int KIND_ARRAY = 4;
    public static final int KIND_MAP = 5;
    public static final int KIND_LINK = 6;
    public static final int KIND_BOOL = 7;
    public static final int KIND_NULL = 8;

    private final int maxDepth;
    private byte[] buf;
    private int pos;
    private int limit;
    private int lastOffset;

    public CborReader() {
        this(DEFAULT_MAX_DEPTH);
    }

    public CborReader(int maxDepth) {
        if (maxDepth < 1) {
            throw new IllegalArgumentException("maxDepth must be >= 1");
        }
        this.maxDepth = maxDepth;
    }

    public CborReader(byte[] buf) {
        this(buf, 0, buf.length);
    }

    public CborReader(byte[] buf, int off, int len) {
        this(DEFAULT_MAX_DEPTH);
        reset(buf, off, len);
    }

    /** Points the cursor at {@code buf[off, off+len)}. */
    public CborReader reset(byte[] buf, int off, int len) {
        if (off < 0 || len < 0 || off > buf.length - len) {
            throw new IndexOutOfBoundsException("range [" + off + ", " + off + "+" + len + ") outside array of " + buf.length);
        }
        this.buf = buf;
        this.pos = off;
        this.limit = off + len;
        this.lastOffset = off;
        return this;
    }

    public byte[] buffer() {
        return buf;
    }

    public int position() {
        return pos;
    }

    public int limit() {
        return limit;
    }

    public int remaining() {
        return limit - pos;
    }

    public boolean hasRemaining() {
        return pos < limit;
    }

    public int maxDepth() {
        return maxDepth;
    }

    /** Offset of the payload of the last text, byte string or link read. */
    public int lastOffset() {
        return lastOffset;
    }

    /** Fails unless the whole input has been consumed. */
    public void requireEnd() {
        if (pos != limit) {
            throw new DecodeException("trailing_bytes", (limit - pos) + " trailing bytes after the CBOR item");
        }
    }

    /** The kind of the next item (one of the {@code KIND_*} constants); rejects what the data model forbids. */
    public int peekKind() {
        if (pos >= limit) {
            throw eof();
        }
        int ib = buf[pos] & 0xff;
        switch (ib >>> 5) {
            case 0:
            case 1:
                return KIND_INT;
            case 2:
                return KIND_BYTES;
            case 3:
                return KIND_TEXT;
            case 4:
                return KIND_ARRAY;
            case 5:
                return KIND_MAP;
            case 6:
                return KIND_LINK;
            default:
                if (ib == 0xf4 || ib == 0xf5) {
                    return KIND_BOOL;
                }
                if (ib == 0xf6) {
                    return KIND_NULL;
                }
                if (ib >= 0xf9 && ib <= 0xfb) {
                    throw new DecodeException("cbor_float", "floats are not allowed in the atproto data model");
                }
                throw new DecodeException("cbor_simple", "unsupported simple value 0x" + Integer.toHexString(ib));
        }
    }

    /**
     * Reads the argument following initial byte {@code ib} (pos already past it), enforcing the
     * shortest form. Returns it as an unsigned 64-bit value (negative when above Long.MAX_VALUE).
     */
    private long readArg(int ib) {
        int ai = ib & 31;
        if (ai < 24) {
            return ai;
        }
        long v;
        switch (ai) {
            case 24:
                need(1);
                v = buf[pos] & 0xff;
                pos += 1;
                if (v < 24) {
                    throw nonMinimal();
                }
                return v;
            case 25:
                need(2);
                v = ((buf[pos] & 0xff) << 8) | (buf[pos + 1] & 0xff);
                pos += 2;
                if (v < 0x100) {
                    throw nonMinimal();
                }
                return v;
            case 26:
                need(4);
                v = ((long) (buf[pos] & 0xff) << 24) | ((buf[pos + 1] & 0xff) << 16) | ((buf[pos + 2] & 0xff) << 8) | (buf[pos + 3] & 0xff);
                pos += 4;
                if (v < 0x10000) {
                    throw nonMinimal();
                }
                return v;
            case 27:
                need(8);
                v = 0;
                for (int i = 0; i < 8; i++) {
                    v = (v << 8) | (buf[pos + i] & 0xff);
                }
                pos += 8;
                if (v >= 0 && v < 0x1_0000_0000L) {
                    throw nonMinimal();
                }
                return v;
            case 31:
                throw new DecodeException("cbor_indefinite", "indefinite-length items are not allowed");
            default:
                throw new DecodeException("bad_cbor", "reserved additional information " + ai);
        }
    }

    private void need(int n) {
        if (limit - pos < n) {
            throw eof();
        }
    }

    private int nextHeader(int major) {
        if (pos >= limit) {
            throw eof();
        }
        int ib = buf[pos] & 0xff;
        if (ib >>> 5 != major) {
            throw new DecodeException("cbor_type", "expected major type " + major + ", found initial byte 0x" + Integer.toHexString(ib));
        }
        pos++;
        return ib;
    }

    /** A length argument that must fit in what remains of the input. */
    private int readLength(int ib, int minBytesPerUnit) {
        long v = readArg(ib);
        if (v < 0 || v > (limit - pos) / minBytesPerUnit) {
            throw new DecodeException("cbor_length", "declared length " + Long.toUnsignedString(v) + " exceeds the remaining " + (limit - pos) + " bytes");
        }
        return (int) v;
    }

    public long readInt() {
        if (pos >= limit) {
            throw eof();
        }
        int ib = buf[pos] & 0xff;
        int major = ib >>> 5;
        if (major > 1) {
            throw new DecodeException("cbor_type", "expected an integer, found initial byte 0x" + Integer.toHexString(ib));
        }
        pos++;
        long v = readArg(ib);
        if (v < 0) {
            throw new DecodeException("cbor_int_range", "integer outside the signed 64-bit range");
        }
        return major == 0 ? v : -1 - v;
    }

    /** Reads a byte string header; returns its length, payload at {@link #lastOffset()}. */
    public int readBytes() {
        int len = readLength(nextHeader(2), 1);
        lastOffset = pos;
        pos += len;
        return len;
    }

    /** Reads a text string and checks its UTF-8; returns its byte length, payload at {@link #lastOffset()}. */
    public int readText() {
        int len = readTextUnvalidated();
        Utf8.validate(buf, lastOffset, len);
        return len;
    }

    /**
     * Reads a text string WITHOUT checking its UTF-8. Only for callers that validate the bytes
     * themselves in the same pass (e.g. a JSON escaper); everyone else uses {@link #readText()}.
     */
    public int readTextUnvalidated() {
        int len = readLength(nextHeader(3), 1);
        lastOffset = pos;
        pos += len;
        return len;
    }

    public String readString() {
        int len = readText();
        return new String(buf, lastOffset, len, StandardCharsets.UTF_8);
    }

    public byte[] readByteArray() {
        int len = readBytes();
        return java.util.Arrays.copyOfRange(buf, lastOffset, lastOffset + len);
    }

    /**
     * Reads a map key, checking it sorts strictly after the previous key of the same map
     * (canonical order, hence no duplicates). Pass {@code prevLen = -1} for the first key.
     * Returns the key's byte length, its bytes at {@link #lastOffset()}.
     */
    public int readKey(int prevOff, int prevLen) {
        int len = readText();
        if (prevLen >= 0 && compareKeys(buf, prevOff, prevLen, buf, lastOffset, len) >= 0) {
            boolean dup = prevLen == len && java.util.Arrays.equals(buf, prevOff, prevOff + prevLen, buf, lastOffset, lastOffset + len);
            throw dup ? new DecodeException("cbor_duplicate_key", "duplicate map key")
                    : new DecodeException("cbor_key_order", "map keys are not in canonical order");
        }
        return len;
    }

    /**
     * Reads the map key {@code name} when it is the next item, as the one-character ASCII text it must
     * be in a fixed-schema map (e.g. an MST node's {@code e}, {@code k}): two byte compares where
     * {@link #readKey} decodes a length and validates UTF-8. False, with nothing read, for anything else.
     */
    public boolean tryReadKey(char name) {
        if (limit - pos >= 2 && buf[pos] == 0x61 && buf[pos + 1] == (byte) name && name < 0x80) {
            lastOffset = pos + 1;
            pos += 2;
            return true;
        }
        return false;
    }

    /** DAG-CBOR map key order: shorter keys first, then unsigned bytewise. */
    public static int compareKeys(byte[] a, int aOff, int aLen, byte[] b, int bOff, int bLen) {
        if (aLen != bLen) {
            return aLen < bLen ? -1 : 1;
        }
        for (int i = 0; i < aLen; i++) {
            int x = a[aOff + i] & 0xff;
            int y = b[bOff + i] & 0xff;
            if (x != y) {
                return x - y;
            }
        }
        return 0;
    }

    /** Reads an array header; returns the element count (never more than the bytes remaining). */
    public int readArrayHeader() {
        return readLength(nextHeader(4), 1);
    }

    /** Reads a map header; returns the entry count (never more than half the bytes remaining). */
    public int readMapHeader() {
        return readLength(nextHeader(5), 2);
    }

    /**
     * Reads a tag-42 CID link; returns the binary CID's length (without the 0x00 multibase prefix),
     * its bytes at {@link #lastOffset()}.
     */
    public int readLink() {
        int start = pos;
        long tag = readArg(nextHeader(6));
        if (tag != 42) {
            pos = start;
            throw new DecodeException("cbor_tag", "unsupported tag " + Long.toUnsignedString(tag) + " (only 42 is allowed)");
        }
        int len = readBytes();
        int off = lastOffset;
        if (len < 2 || buf[off] != 0) {
            throw new DecodeException("bad_cid", "CID link must be a byte string starting with 0x00");
        }
        if (Cid.binaryLength(buf, off + 1, off + len) != len - 1) {
            throw new DecodeException("bad_cid", "trailing bytes after CID in link");
        }
        lastOffset = off + 1;
        return len - 1;
    }

    public Cid readCid() {
        int len = readLink();
        return Cid.decode(buf, lastOffset, len);
    }

    public boolean readBool() {
        if (pos >= limit) {
            throw eof();
        }
        int ib = buf[pos] & 0xff;
        if (ib != 0xf4 && ib != 0xf5) {
            throw new DecodeException("cbor_type", "expected a boolean, found initial byte 0x" + Integer.toHexString(ib));
        }
        pos++;
        return ib == 0xf5;
    }

    public void readNull() {
        if (pos >= limit) {
            throw eof();
        }
        if ((buf[pos] & 0xff) != 0xf6) {
            throw new DecodeException("cbor_type", "expected null, found initial byte 0x" + Integer.toHexString(buf[pos] & 0xff));
        }
        pos++;
    }

    /** Consumes a null if one is next. */
    public boolean tryReadNull() {
        if (pos < limit && (buf[pos] & 0xff) == 0xf6) {
            pos++;
            return true;
        }
        return false;
    }

    /** Skips one item, validating it completely (the same rules as every read). */
    public void skip() {
        skip(0);
    }

    /** {@link #skip()} of an item nested {@code depth} containers deep (the depth bound counts from the top). */
    public void skip(int depth) {
        switch (peekKind()) {
            case KIND_INT:
                readInt();
                return;
            case KIND_BYTES:
                readBytes();
                return;
            case KIND_TEXT:
                readText();
                return;
            case KIND_ARRAY: {
                int n = readArrayHeader();
                checkDepth(depth + 1);
                for (int i = 0; i < n; i++) {
                    skip(depth + 1);
                }
                return;
            }
            case KIND_MAP: {
                int n = readMapHeader();
                checkDepth(depth + 1);
                int prevOff = 0;
                int prevLen = -1;
                for (int i = 0; i < n; i++) {
                    prevLen = readKey(prevOff, prevLen);
                    prevOff = lastOffset;
                    skip(depth + 1);
                }
                return;
            }
            case KIND_LINK:
                readLink();
                return;
            default:
                pos++;
        }
    }

    /** Fails when a container would open at {@code depth} (1 = top level) beyond the bound. */
    public void checkDepth(int depth) {
        if (depth > maxDepth) {
            throw new DecodeException("cbor_depth", "nesting deeper than " + maxDepth);
        }
    }

    /** Whether the key just read ({@code len} bytes at {@link #lastOffset()}) equals the ASCII {@code name}. */
    public boolean keyEquals(int len, String name) {
        if (len != name.length()) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            if (buf[lastOffset + i] != name.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static DecodeException eof() {
        return new DecodeException("cbor_eof", "unexpected end of CBOR input");
    }

    private static DecodeException nonMinimal() {
        return new DecodeException("cbor_non_minimal", "integer or length not in its shortest encoding");
    }
}
