package jetstream.segment.io;

import com.dynatrace.hash4j.hashing.HashStream64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentLimits;

/**
 * The parts of a sealed file the rewriters need, read through a channel: the 256-byte header, the
 * block index, and the footer bytes, with the checksum verified (a rewrite never launders a
 * corrupt file into a freshly checksummed one).
 */
final class SealedFile {
    static final int ENTRY_SIZE = 52;
    static final int OFF_CHECKSUM = 4;
    static final int OFF_BLOCK_COUNT = 14;
    static final int OFF_EVENT_COUNT = 18;
    static final int OFF_UNIQUE_DIDS = 22;
    static final int OFF_MIN_SEQ = 26;
    static final int OFF_MAX_SEQ = 34;
    static final int OFF_MIN_WITNESSED = 42;
    static final int OFF_MAX_WITNESSED = 50;
    static final int OFF_FOOTER = 58;
    static final int OFF_DID_BLOOM = 66;
    static final int OFF_BLOCK_BLOOMS = 74;
    static final int OFF_COLLECTIONS = 82;
    static final int OFF_BLOCK_INDEX = 90;

    final Path path;
    final ByteBuffer header;
    final byte[] footer;
    final long footerOffset;
    final int blockCount;

    private SealedFile(Path path, ByteBuffer header, byte[] footer, long footerOffset, int blockCount) {
        this.path = path;
        this.header = header;
        this.footer = footer;
        this.footerOffset = footerOffset;
        this.blockCount = blockCount;
    }

    static SealedFile read(FileChannel ch, Path path) throws IOException {
        long size = ch.size();
        if (size < ActiveSegment.HEADER_SIZE) {
            throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT, path + ": shorter than its header");
        }
        ByteBuffer h = ByteBuffer.allocate(ActiveSegment.HEADER_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        FrameWalk.readFully(ch, h, 0);
        for (int i = 0; i < 4; i++) {
            if (h.get(i) != ActiveSegment.MAGIC[i]) {
                throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT, path + ": bad magic");
            }
        }
        if (h.getLong(OFF_CHECKSUM) == 0) {
            throw new SegmentException(SegmentException.Type.ACTIVE_SEGMENT, path + " is active, not sealed");
        }
        long footerOffset = h.getLong(OFF_FOOTER);
        long blockCount = Integer.toUnsignedLong(h.getInt(OFF_BLOCK_COUNT));
        if (footerOffset < ActiveSegment.HEADER_SIZE || footerOffset > size || h.getLong(OFF_BLOCK_INDEX) != footerOffset
                || blockCount > SegmentLimits.MAX_BLOCK_COUNT || size - footerOffset > Integer.MAX_VALUE
                || footerOffset + blockCount * ENTRY_SIZE > size) {
            throw new SegmentException(SegmentException.Type.INVALID_FOOTER, path + ": footer offsets out of range");
        }
        byte[] footer = new byte[(int) (size - footerOffset)];
        FrameWalk.readFully(ch, ByteBuffer.wrap(footer), footerOffset);
        if (checksum(h.array(), footer, 0, footer.length) != h.getLong(OFF_CHECKSUM)) {
            throw new SegmentException(SegmentException.Type.CHECKSUM_MISMATCH, path + ": checksum mismatch");
        }
        return new SealedFile(path, h, footer, footerOffset, (int) blockCount);
    }

    /** XXH3-64 over {@code header[12, 256)} followed by the footer (facts §1.4). */
    static long checksum(byte[] header, byte[] footer, int off, int len) {
        HashStream64 s = Hashing.xxh3_64().hashStream();
        s.putBytes(header, 12, ActiveSegment.HEADER_SIZE - 12);
        s.putBytes(footer, off, len);
        return s.getAsLong();
    }

    private ByteBuffer entries() {
        return ByteBuffer.wrap(footer).order(ByteOrder.LITTLE_ENDIAN);
    }

    long blockOffset(int i) {
        return entries().getLong(i * ENTRY_SIZE);
    }

    long compressedSize(int i) {
        return Integer.toUnsignedLong(entries().getInt(i * ENTRY_SIZE + 8));
    }

    long uncompressedSize(int i) {
        return Integer.toUnsignedLong(entries().getInt(i * ENTRY_SIZE + 12));
    }

    long headerLong(int offset) {
        return header.getLong(offset);
    }

    /** Reads block {@code i}'s frame (without its prefix), checking the prefix agrees with the index. */
    byte[] readFrame(FileChannel ch, int i) throws IOException {
        long off = blockOffset(i);
        long len = compressedSize(i);
        if (off < ActiveSegment.HEADER_SIZE || off + 8 + len > footerOffset) {
            throw new SegmentException(SegmentException.Type.INVALID_BLOCK_INDEX, path + ": block " + i + " out of range");
        }
        ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        FrameWalk.readFully(ch, prefix, off);
        if (prefix.getLong(0) != len) {
            throw new SegmentException(SegmentException.Type.INVALID_BLOCK_INDEX,
                    path + ": block " + i + " length prefix " + prefix.getLong(0) + " != index " + len);
        }
        byte[] frame = new byte[(int) len];
        FrameWalk.readFully(ch, ByteBuffer.wrap(frame), off + 8);
        return frame;
    }
}
