package jetstream.segment;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Where our optional skippable frames sit after the collection-index frame (docs/segment-format.md):
 * the DID-hash section ({@link DidHashSection}), then the DID census ({@link DidCensus}), each
 * optional, in that order, together running exactly to the end of the file. Every zstd decoder steps
 * over skippable frames, so a reader that knows neither (the Go reader) decodes the collection index
 * alone. Anything else after the frame is not a tail: the frame is then checked as the only content.
 *
 * @param frameEnd where the collection-index frame ends and the tail starts
 * @param didHashAt where the DID-hash section starts, -1 when there is none
 * @param didHashLength its bytes
 * @param censusAt where the DID census starts, -1 when there is none
 * @param censusLength its bytes
 */
public record FooterTail(int frameEnd, int didHashAt, int didHashLength, int censusAt, int censusLength) {
    /**
     * The tail of the collection-index bytes {@code src[off, off+len)} (16-byte head, zstd frame,
     * then possibly the tail), positions relative to {@code off}; null when the frame runs to the end
     * or what follows it is not a tail.
     */
    public static FooterTail locate(byte[] src, int off, int len) {
        int frameAt = CollectionIndex.HEADER_SIZE;
        if (len <= frameAt) {
            return null;
        }
        long frame;
        try {
            frame = Zstd.findFrameCompressedSize(src, off + frameAt, len - frameAt);
        } catch (ZstdException e) {
            return null;
        }
        if (Zstd.isError(frame) || frame <= 0 || frame >= len - frameAt) {
            return null;
        }
        return parse(ByteBuffer.wrap(src, off, len).slice(), frameAt + (int) frame, len);
    }

    /**
     * The tail of the collection index at {@code collAt} in {@code file} ({@code size} bytes), positions
     * in {@code file}; when there is none, {@code frameEnd} is {@code size} and both sections are
     * absent. Reads only a prefix of growing length until the frame is complete, so a loader does
     * not copy the sections (megabytes per segment) to find the index (kilobytes).
     */
    public static FooterTail find(ByteBuffer file, int collAt, int size) {
        FooterTail none = new FooterTail(size, -1, 0, -1, 0);
        int frameAt = collAt + CollectionIndex.HEADER_SIZE;
        int avail = size - frameAt;
        for (int len = Math.min(avail, 1 << 16); len > 0; len = Math.min(avail, len * 4)) {
            byte[] prefix = new byte[len];
            file.get(frameAt, prefix, 0, len);
            long frame;
            try {
                frame = Zstd.findFrameCompressedSize(prefix, 0, len);
            } catch (ZstdException e) {
                frame = -1;
            }
            if (!Zstd.isError(frame) && frame > 0) {
                int end = frameAt + (int) frame;
                FooterTail tail = end < size ? parse(file, end, size) : null;
                return tail == null ? none : tail;
            }
            if (len == avail) {
                return none;
            }
        }
        return none;
    }

    /** The tail exactly filling {@code b[at, end)}, or null when those bytes are not one. */
    private static FooterTail parse(ByteBuffer b, int at, int end) {
        ByteBuffer f = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int p = at;
        int hashAt = -1;
        int hashLen = 0;
        int frame = frameLength(f, p, end, DidHashSection.SKIPPABLE_MAGIC);
        if (frame > 0 && DidHashSection.isFramed(f.slice(p, frame))) {
            hashAt = p;
            hashLen = frame;
            p += frame;
        }
        int censusAt = -1;
        int censusLen = 0;
        frame = frameLength(f, p, end, DidCensus.SKIPPABLE_MAGIC);
        if (frame >= DidCensus.HEAD + DidCensus.TRAILER && f.getInt(p + 8) == DidCensus.MAGIC) {
            censusAt = p;
            censusLen = frame;
            p += frame;
        }
        return p == end && p > at ? new FooterTail(at, hashAt, hashLen, censusAt, censusLen) : null;
    }

    /** The bytes of the skippable frame with this magic at {@code p}, or -1 when there is none within {@code end}. */
    private static int frameLength(ByteBuffer f, int p, int end, int magic) {
        if (end - p < 8 || f.getInt(p) != magic) {
            return -1;
        }
        long len = 8 + (f.getInt(p + 4) & 0xFFFFFFFFL);
        return len <= end - p ? (int) len : -1;
    }
}
