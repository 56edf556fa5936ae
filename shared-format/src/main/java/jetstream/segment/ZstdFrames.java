package jetstream.segment;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import java.util.Arrays;

/**
 * The zstd frames of a segment (block bodies and the collection-index body): one frame each, content
 * checksum on, no dictionary (docs/segment-format.md). Decompression accepts frames with or without a content
 * size, verifies the content checksum when present, rejects anything but exactly one frame, and caps
 * output at {@link SegmentLimits#MAX_FRAME_CONTENT_SIZE}.
 *
 * <p>Holds native zstd contexts: one instance per thread, closed when done.
 */
public final class ZstdFrames implements AutoCloseable {
    /** zstd level 3, the closest match to the Go writer's {@code SpeedDefault}. */
    public static final int DEFAULT_LEVEL = 3;

    private static final int FIRST_GUESS = 64 << 10;

    private final ZstdCompressCtx cctx;
    private final ZstdDecompressCtx dctx;
    private final int level;

    public ZstdFrames() {
        this(DEFAULT_LEVEL);
    }

    public ZstdFrames(int level) {
        this(level, true);
    }

    /** {@code checksum=false} exists only for the seal's zero-checksum escape (see {@link FooterBuilder}). */
    ZstdFrames(int level, boolean checksum) {
        this.level = level;
        this.cctx = new ZstdCompressCtx().setLevel(level).setChecksum(checksum).setContentSize(true);
        this.dctx = new ZstdDecompressCtx();
    }

    public int level() {
        return level;
    }

    /** Worst-case frame size for {@code len} input bytes. */
    public static int compressBound(int len) {
        return (int) Zstd.compressBound(len);
    }

    /** Compresses {@code src[off, off+len)} into a new frame of exactly the compressed length. */
    public byte[] compress(byte[] src, int off, int len) {
        byte[] dst = new byte[compressBound(len)];
        int n = compress(src, off, len, dst, 0);
        return Arrays.copyOf(dst, n);
    }

    /**
     * Compresses into {@code dst} at {@code dstOff}; {@code dst} must have {@link #compressBound}
     * bytes available. Returns the frame length.
     */
    public int compress(byte[] src, int off, int len, byte[] dst, int dstOff) {
        return cctx.compressByteArray(dst, dstOff, dst.length - dstOff, src, off, len);
    }

    /**
     * The content size declared in the frame header, or -1 when the frame does not declare one.
     *
     * @throws SegmentException CORRUPT_SEGMENT for a malformed header or a size above the cap
     */
    public static long declaredContentSize(byte[] frame, int off, int len) {
        long size;
        try {
            size = Zstd.getFrameContentSize(frame, off, len);
        } catch (ZstdException e) {
            throw SegmentException.corrupt("zstd frame header: " + e.getMessage());
        }
        if (size == -1) {
            return -1;
        }
        if (size < 0) {
            throw SegmentException.corrupt("zstd frame header unreadable");
        }
        if (size > SegmentLimits.MAX_FRAME_CONTENT_SIZE) {
            throw SegmentException.corrupt("zstd frame declares " + size + " bytes, above the 1 GiB cap");
        }
        return size;
    }

    /** Decompresses exactly one frame into a new array of its content length. */
    public byte[] decompress(byte[] frame, int off, int len) {
        long declared = declaredContentSize(frame, off, len);
        if (declared >= 0) {
            byte[] out = new byte[(int) declared];
            decompressInto(frame, off, len, out, (int) declared);
            return out;
        }
        int cap = FIRST_GUESS;
        while (true) {
            byte[] out = new byte[cap];
            int n = tryDecompress(frame, off, len, out, cap);
            if (n >= 0) {
                return Arrays.copyOf(out, n);
            }
            if (cap == SegmentLimits.MAX_FRAME_CONTENT_SIZE) {
                throw SegmentException.corrupt("zstd frame decompresses to more than the 1 GiB cap");
            }
            cap = (int) Math.min((long) cap * 4, SegmentLimits.MAX_FRAME_CONTENT_SIZE);
        }
    }

    /**
     * Decompresses exactly one frame into {@code dst[0, capacity)} and returns the content length.
     * The caller sizes {@code dst} from {@link #declaredContentSize} or an expected size.
     *
     * @throws SegmentException CORRUPT_SEGMENT when the frame is bad or its content exceeds capacity
     */
    public int decompressInto(byte[] frame, int off, int len, byte[] dst, int capacity) {
        int n = tryDecompress(frame, off, len, dst, capacity);
        if (n < 0) {
            throw SegmentException.corrupt("zstd frame content larger than " + capacity + " bytes");
        }
        return n;
    }

    /** Returns the content length, or -1 when {@code capacity} was too small. */
    private int tryDecompress(byte[] frame, int off, int len, byte[] dst, int capacity) {
        requireSingleFrame(frame, off, len);
        try {
            return dctx.decompressByteArray(dst, 0, capacity, frame, off, len);
        } catch (ZstdException e) {
            if (e.getErrorCode() == Zstd.errDstSizeTooSmall()) {
                return -1;
            }
            throw SegmentException.corrupt("zstd frame: " + e.getMessage());
        } catch (RuntimeException e) {
            throw SegmentException.corrupt("zstd frame: " + e);
        }
    }

    private static void requireSingleFrame(byte[] frame, int off, int len) {
        // The frame header's "unused" bit is ignored by decoders, so a flip there would go unnoticed;
        // no encoder sets it, so a set bit can only be damage.
        if (len > 4 && (frame[off + 4] & 0x10) != 0) {
            throw SegmentException.corrupt("zstd frame header has its unused bit set");
        }
        long size;
        try {
            size = Zstd.findFrameCompressedSize(frame, off, len);
        } catch (ZstdException e) {
            throw SegmentException.corrupt("zstd frame: " + e.getMessage());
        }
        if (Zstd.isError(size) || size != len) {
            throw SegmentException.corrupt("expected exactly one zstd frame of " + len + " bytes");
        }
    }

    /** Direct buffers of {@link #beginPrefix}'s streaming decompression (zstd-jni streams only direct memory). */
    private java.nio.ByteBuffer streamIn;
    private java.nio.ByteBuffer streamOut;

    /**
     * Starts decompressing one frame of {@code content} bytes from its start, to read only a prefix
     * ({@link #prefix}): zstd decodes block by block, so a prefix costs about its share of the frame.
     */
    public void beginPrefix(byte[] frame, int off, int len, int content) {
        requireSingleFrame(frame, off, len);
        dctx.reset();
        streamIn = direct(streamIn, len);
        streamIn.put(frame, off, len).flip();
        streamOut = direct(streamOut, content);
        streamOut.limit(content);
    }

    private static java.nio.ByteBuffer direct(java.nio.ByteBuffer b, int capacity) {
        if (b == null || b.capacity() < capacity) {
            b = java.nio.ByteBuffer.allocateDirect(Math.max(capacity, b == null ? 0 : b.capacity() + (b.capacity() >> 1)));
        }
        return b.clear();
    }

    /**
     * Copies content bytes {@code [from, to)} of the frame begun with {@link #beginPrefix} into
     * {@code dst} at {@code from}, decompressing as far as needed (calls move forward only).
     *
     * @throws SegmentException CORRUPT_SEGMENT when the frame is bad or ends before {@code to}
     */
    public void prefix(byte[] dst, int from, int to) {
        try {
            while (streamOut.position() < to) {
                java.nio.ByteBuffer out = streamOut.duplicate().limit(to);
                int before = out.position();
                int inBefore = streamIn.position();
                boolean done = dctx.decompressDirectByteBufferStream(out, streamIn);
                streamOut.position(out.position());
                if (out.position() < to && (done || out.position() == before && streamIn.position() == inBefore)) {
                    throw SegmentException.corrupt("zstd frame ends after " + out.position() + " of " + to + " bytes");
                }
            }
        } catch (ZstdException e) {
            throw SegmentException.corrupt("zstd frame: " + e.getMessage());
        }
        streamOut.get(from, dst, from, to - from);
    }

    @Override
    public void close() {
        cctx.close();
        dctx.close();
    }
}
