package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import jetstream.segment.BlockIndex;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;

/**
 * A sealed file as the rewriters read it through a channel: header, block index and footer bytes,
 * with the checksum verified first (a rewrite must never launder a corrupt file into a freshly
 * checksummed one).
 */
final class SealedFile {
    final Path path;
    final SegmentHeader header;
    final byte[] footer;
    final BlockIndex index;

    private SealedFile(Path path, SegmentHeader header, byte[] footer, BlockIndex index) {
        this.path = path;
        this.header = header;
        this.footer = footer;
        this.index = index;
    }

    static SealedFile read(FileChannel ch, Path path) throws IOException {
        long size = ch.size();
        byte[] hb = new byte[SegmentHeader.SIZE];
        if (size < hb.length) {
            throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT, path + ": shorter than its header");
        }
        Channels.readFully(ch, ByteBuffer.wrap(hb), 0);
        SegmentHeader h;
        try {
            h = SegmentHeader.parseSealed(hb, 0);
            h.validateFooterLayout(size);
        } catch (SegmentException e) {
            throw new SegmentException(e.type(), path + ": " + e.getMessage(), e);
        }
        if (size - h.footerOffset() > Integer.MAX_VALUE) {
            throw new SegmentException(SegmentException.Type.INVALID_FOOTER, path + ": footer larger than 2 GiB");
        }
        byte[] footer = new byte[(int) (size - h.footerOffset())];
        Channels.readFully(ch, ByteBuffer.wrap(footer), h.footerOffset());
        if (SegmentHeader.computeChecksum(hb, footer, 0, footer.length) != h.checksum()) {
            throw new SegmentException(SegmentException.Type.CHECKSUM_MISMATCH, path + ": checksum mismatch");
        }
        int count = (int) h.blockCount();
        BlockIndex index = BlockIndex.parse(footer, 0, count * BlockIndexEntry.SIZE, count, h.footerOffset());
        return new SealedFile(path, h, footer, index);
    }

    int blockCount() {
        return index.size();
    }

    BlockIndexEntry entry(int i) {
        return index.get(i);
    }

    /** Block {@code i}'s frame (without its prefix), checking the prefix agrees with the index. */
    byte[] readFrame(FileChannel ch, int i) throws IOException {
        BlockIndexEntry e = index.get(i);
        ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        Channels.readFully(ch, prefix, e.offset());
        if (prefix.getLong(0) != e.compressedSize()) {
            throw new SegmentException(SegmentException.Type.INVALID_BLOCK_INDEX,
                    path + ": block " + i + " length prefix " + prefix.getLong(0) + " != index " + e.compressedSize());
        }
        byte[] frame = new byte[(int) e.compressedSize()];
        Channels.readFully(ch, ByteBuffer.wrap(frame), e.offset() + 8);
        return frame;
    }
}
