package jetstream.segment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * Reads an active (unsealed) segment up to its last complete block without modifying it: the file
 * may be growing, have a torn tail from a crash, or end in the footer of a seal a crash interrupted
 * before its header was written (the blocks before it are read, as the writer's resume keeps them).
 * A complete frame that fails to decode is corrupt (docs/segment-format.md: only an incomplete tail is tolerated).
 */
public final class ActiveSegmentReader {
    private final ByteBuffer file;
    private final BlockFraming.Scan scan;

    private ActiveSegmentReader(ByteBuffer file, BlockFraming.Scan scan) {
        this.file = file;
        this.scan = scan;
    }

    /** Maps the file's current length read-only. */
    public static ActiveSegmentReader open(Path path) throws IOException {
        return open(SegmentReader.map(path));
    }

    /**
     * @throws SegmentException CORRUPT_SEGMENT for a short file or bad magic, SEGMENT_SEALED when the
     *     checksum field is non-zero
     */
    public static ActiveSegmentReader open(ByteBuffer file) {
        ByteBuffer f = file.duplicate();
        if (f.limit() < SegmentHeader.SIZE) {
            throw SegmentException.corrupt("segment of " + f.limit() + " bytes is shorter than its header");
        }
        byte[] hb = new byte[SegmentHeader.SIZE];
        f.get(0, hb, 0, hb.length);
        if (!SegmentHeader.hasMagic(hb, 0)) {
            throw SegmentException.corrupt("bad segment magic");
        }
        if (SegmentHeader.storedChecksum(hb, 0) != 0) {
            throw new SegmentException(SegmentException.Type.SEGMENT_SEALED, "segment is sealed");
        }
        return new ActiveSegmentReader(f, withoutInterruptedSeal(f, BlockFraming.scan(f, f.limit())));
    }

    private static BlockFraming.Scan withoutInterruptedSeal(ByteBuffer f, BlockFraming.Scan walk) {
        ByteBuffer le = f.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < walk.blockCount(); i++) {
            int frame = (int) walk.offsets()[i] + SegmentLimits.FRAME_PREFIX_SIZE;
            if (walk.frameLengths()[i] >= 4 && BlockFraming.isZstdMagic(le.getInt(frame))) {
                continue;
            }
            int present = BlockFraming.sealFooterEntriesPresent(walk, i);
            if (BlockFraming.matchesBlockIndex(walk, le.duplicate().position((int) walk.offsets()[i]), present)) {
                return walk.cutAt(i);
            }
        }
        return walk;
    }

    public int blockCount() {
        return scan.blockCount();
    }

    /** The framing walk: frame offsets, lengths, last good offset. */
    public BlockFraming.Scan scan() {
        return scan;
    }

    /** The zstd frame of block {@code i} (no prefix), as a copy. */
    public byte[] frameBytes(int i) {
        check(i);
        byte[] out = new byte[(int) scan.frameLengths()[i]];
        file.get((int) scan.offsets()[i] + SegmentLimits.FRAME_PREFIX_SIZE, out, 0, out.length);
        return out;
    }

    /** Decodes complete block {@code i} into {@code view}. */
    public BlockView block(int i, BlockView view, ZstdFrames zstd) {
        check(i);
        int len = (int) scan.frameLengths()[i];
        byte[] frame = view.frameScratch(len);
        file.get((int) scan.offsets()[i] + SegmentLimits.FRAME_PREFIX_SIZE, frame, 0, len);
        return view.decodeFrame(zstd, frame, 0, len, -1);
    }

    private void check(int i) {
        if (i < 0 || i >= scan.blockCount()) {
            throw new SegmentException(SegmentException.Type.BLOCK_OUT_OF_RANGE, "block " + i + " of " + scan.blockCount());
        }
    }
}
