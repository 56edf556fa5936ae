package jetstream.atproto.car;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.CborReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.cid.Varint;

/**
 * CAR v1 reader: {@code varint(len) header} then {@code varint(len) cid data} frames. The header is
 * the DAG-CBOR map {@code {roots: [link...], version: 1}}. Every block's hash is recomputed and
 * compared with its CID before the block is returned.
 *
 * <p>Memory is bounded: a frame larger than the configured block limit is rejected before any
 * buffer is allocated for it, and a stream is read one frame at a time. Malformed input fails with
 * {@link DecodeException}; stream failures surface as {@link IOException}.
 */
public final class CarReader {
    /** Default bound on one frame (CID + data): records are at most 1 MiB, MST nodes far less. */
    public static final int DEFAULT_MAX_BLOCK_BYTES = 2 * 1024 * 1024;
    /** Bound on the header frame. */
    public static final int MAX_HEADER_BYTES = 64 * 1024;

    private final InputStream in;
    private final byte[] array;
    private int arrayPos;
    private final int arrayEnd;
    private final int maxBlockBytes;
    private final List<Cid> roots;
    private final byte[] varintBytes = new byte[Varint.MAX_BYTES];

    private CarReader(InputStream in, byte[] array, int off, int len, int maxBlockBytes) throws IOException {
        this.in = in;
        this.array = array;
        this.arrayPos = off;
        this.arrayEnd = off + len;
        this.maxBlockBytes = maxBlockBytes;
        long headerLen = readFrameLength();
        if (headerLen < 0) {
            throw new DecodeException("car_header", "empty CAR");
        }
        if (headerLen == 0 || headerLen > MAX_HEADER_BYTES) {
            throw new DecodeException("car_header", "CAR header length " + headerLen + " out of range");
        }
        byte[] hb;
        int hOff;
        if (array != null) {
            hb = array;
            hOff = arrayPos;
            arrayPos += (int) headerLen;
        } else {
            hb = readFully((int) headerLen);
            hOff = 0;
        }
        this.roots = parseHeader(hb, hOff, (int) headerLen);
    }

    /** Streams a CAR from {@code in} with {@link #DEFAULT_MAX_BLOCK_BYTES}. Does not close it. */
    public static CarReader open(InputStream in) throws IOException {
        return open(in, DEFAULT_MAX_BLOCK_BYTES);
    }

    public static CarReader open(InputStream in, int maxBlockBytes) throws IOException {
        return new CarReader(in, null, 0, 0, maxBlockBytes);
    }

    /** Reads a CAR held in memory; returned blocks alias {@code car}. */
    public static CarReader of(byte[] car, int off, int len) {
        return of(car, off, len, DEFAULT_MAX_BLOCK_BYTES);
    }

    public static CarReader of(byte[] car) {
        return of(car, 0, car.length);
    }

    public static CarReader of(byte[] car, int off, int len, int maxBlockBytes) {
        if (off < 0 || len < 0 || off > car.length - len) {
            throw new IndexOutOfBoundsException("range outside array");
        }
        try {
            return new CarReader(null, car, off, len, maxBlockBytes);
        } catch (IOException e) {
            throw new IllegalStateException("in-memory CAR cannot fail with I/O", e);
        }
    }

    /**
     * Reads every block of an in-memory CAR into a map keyed by CID (first occurrence wins), e.g. to
     * look up the record blocks of a firehose commit.
     */
    public static Map<Cid, CarBlock> readAll(byte[] car, int off, int len) {
        return of(car, off, len).remainingBlocks();
    }

    /**
     * The blocks not read yet of an in-memory CAR, keyed by CID (first occurrence wins): with
     * {@link #roots()}, one pass over the CAR where {@link #readAll} would parse its header again.
     */
    public Map<Cid, CarBlock> remainingBlocks() {
        if (array == null) {
            throw new IllegalStateException("remainingBlocks is for in-memory CARs; stream with next()");
        }
        // sized from the bytes left (a block is a CID, a length and its data: rarely under 128 bytes),
        // so a repository's thousands of blocks do not rehash the map at every doubling
        int expected = (int) Math.min(1 << 20, (arrayEnd - arrayPos) / 128L);
        Map<Cid, CarBlock> blocks = new HashMap<>(Math.max(16, expected * 4 / 3 + 1));
        for (CarBlock b = nextInMemory(); b != null; b = nextInMemory()) {
            blocks.putIfAbsent(b.cid(), b);
        }
        return blocks;
    }

    public List<Cid> roots() {
        return roots;
    }

    /** The next verified block, or null at the clean end of the CAR. */
    public CarBlock next() throws IOException {
        long frameLen = readFrameLength();
        if (frameLen < 0) {
            return null;
        }
        if (frameLen == 0) {
            throw new DecodeException("car_frame", "zero-length CAR frame");
        }
        if (frameLen > maxBlockBytes) {
            throw new DecodeException("car_block_too_large", "CAR frame of " + frameLen + " bytes exceeds the limit " + maxBlockBytes);
        }
        byte[] buf;
        int off;
        int len = (int) frameLen;
        if (array != null) {
            buf = array;
            off = arrayPos;
            arrayPos += len;
        } else {
            buf = readFully(len);
            off = 0;
        }
        int cidLen = Cid.binaryLength(buf, off, off + len);
        Cid cid = Cid.decode(buf, off, cidLen);
        int dataOff = off + cidLen;
        int dataLen = len - cidLen;
        if (!cid.matches(buf, dataOff, dataLen)) {
            throw new DecodeException("car_cid_mismatch", "block bytes do not hash to " + cid);
        }
        return new CarBlock(cid, buf, dataOff, dataLen);
    }

    private CarBlock nextInMemory() {
        try {
            return next();
        } catch (IOException e) {
            throw new IllegalStateException("in-memory CAR cannot fail with I/O", e);
        }
    }

    /** A frame's varint length, or -1 at a clean end (no byte left before it). */
    private long readFrameLength() throws IOException {
        byte[] tmp = varintBytes;
        int n = 0;
        while (true) {
            int b;
            if (array != null) {
                b = arrayPos < arrayEnd ? array[arrayPos++] & 0xff : -1;
            } else {
                b = in.read();
            }
            if (b < 0) {
                if (n == 0) {
                    return -1;
                }
                throw new DecodeException("car_truncated", "CAR ends inside a frame length");
            }
            tmp[n++] = (byte) b;
            if ((b & 0x80) == 0 || n == Varint.MAX_BYTES) {
                break;
            }
        }
        long v = Varint.decode(tmp, 0, n);
        if (array != null && v > arrayEnd - arrayPos) {
            throw new DecodeException("car_truncated", "CAR frame of " + v + " bytes runs past the end of the input");
        }
        return v;
    }

    private byte[] readFully(int len) throws IOException {
        byte[] b = in.readNBytes(len);
        if (b.length != len) {
            throw new DecodeException("car_truncated", "CAR ends inside a frame");
        }
        return b;
    }

    private static List<Cid> parseHeader(byte[] b, int off, int len) {
        CborReader r = new CborReader(b, off, len);
        if (r.peekKind() != CborReader.KIND_MAP) {
            throw new DecodeException("car_header", "CAR header is not a map");
        }
        int n = r.readMapHeader();
        List<Cid> roots = null;
        long version = -1;
        int prevOff = 0;
        int prevLen = -1;
        for (int i = 0; i < n; i++) {
            prevLen = r.readKey(prevOff, prevLen);
            prevOff = r.lastOffset();
            if (r.keyEquals(prevLen, "roots")) {
                if (r.peekKind() != CborReader.KIND_ARRAY) {
                    throw new DecodeException("car_header", "CAR roots is not an array");
                }
                int count = r.readArrayHeader();
                roots = new ArrayList<>(count);
                for (int k = 0; k < count; k++) {
                    if (r.peekKind() != CborReader.KIND_LINK) {
                        throw new DecodeException("car_header", "CAR root is not a CID link");
                    }
                    roots.add(r.readCid());
                }
            } else if (r.keyEquals(prevLen, "version")) {
                if (r.peekKind() != CborReader.KIND_INT) {
                    throw new DecodeException("car_header", "CAR version is not an integer");
                }
                version = r.readInt();
            } else {
                throw new DecodeException("car_header", "unexpected key in CAR header");
            }
        }
        r.requireEnd();
        if (version != 1) {
            throw new DecodeException("car_version", "unsupported CAR version " + version);
        }
        if (roots == null) {
            throw new DecodeException("car_header", "CAR header has no roots");
        }
        return Collections.unmodifiableList(roots);
    }
}
