package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import jetstream.segment.BlockFraming;
import jetstream.segment.BlockView;
import jetstream.segment.Footer;
import jetstream.segment.FooterBuilder;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.ZstdFrames;

/**
 * Seals an active segment on disk (docs/segment-format.md): footer_offset = file size; the footer comes
 * from the rows fed to its builder as each block was written or, for a resumed file, decoded by the
 * resume ({@link ActiveSegment#footerBuilder}), else from every frame re-read from disk and decoded;
 * the same footer bytes either way. The footer is written and fsynced, then the finalized header over offset 0,
 * fsynced. If the header cannot be written the file is put back into its active state (active
 * header, footer truncated away).
 */
public final class SegmentSealer {
    private SegmentSealer() {}

    /** A sealed file: its finalized header and final size. */
    public record Result(Path path, SegmentHeader header, long fileSize) {}

    /** Resumes {@code path} (cutting any torn tail) and seals it. */
    public static Result seal(SegmentIO io, Path path) {
        try (ZstdFrames zstd = new ZstdFrames()) {
            return seal(ActiveSegment.resume(io, path, zstd), zstd);
        }
    }

    /**
     * Seals {@code segment} and closes it. The caller has flushed every pending row into it.
     *
     * @throws SegmentPersistenceException on a failed write, fsync or truncate (fatal; the segment
     *     is unusable)
     * @throws SegmentException when a frame on disk does not decode
     */
    public static Result seal(ActiveSegment segment, ZstdFrames zstd) {
        segment.requireUsable();
        SegmentIO io = segment.io();
        Path path = segment.path();
        FileChannel ch = segment.channel();
        try {
            long footerOffset = ch.size();
            FooterBuilder fed = segment.footerBuilder();
            if (fed != null && footerOffset != segment.size()) {
                throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT, path + " is " + footerOffset
                        + " bytes at its seal, not the " + segment.size() + " its writer wrote");
            }
            Footer footer = fed != null ? fed.build(footerOffset) : buildFooter(ch, path, footerOffset, zstd);
            try {
                io.write(ch, path, ByteBuffer.wrap(footer.footerBytes()), footerOffset);
                io.fsync(ch, path);
            } catch (IOException e) {
                throw segment.fail("writing the footer of", e);
            }
            try {
                io.write(ch, path, ByteBuffer.wrap(footer.headerBytes()), 0);
            } catch (IOException e) {
                restoreActive(io, ch, path, footerOffset, e);
                throw segment.fail("writing the sealed header of", e);
            }
            try {
                io.fsync(ch, path);
            } catch (IOException e) {
                // The header may or may not be on disk; the file is left for restart to sort out
                // (a lost header reads as an interrupted seal, a kept one as sealed).
                throw segment.fail("syncing the sealed header of", e);
            }
            segment.close();
            return new Result(path, footer.header(), footer.fileSize());
        } catch (IOException e) {
            throw segment.fail("sealing", e);
        }
    }

    /**
     * Derives the footer from the frames in {@code [256, footerOffset)}, stopping at the first empty
     * block; the frames are read and decoded ahead on a helper thread ({@link BlockPrefetch}).
     */
    static Footer buildFooter(FileChannel ch, Path path, long footerOffset, ZstdFrames zstd) throws IOException {
        BlockFraming.Scan scan = BlockFraming.scan(ch, footerOffset);
        if (scan.hasTornTail()) {
            throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT,
                    path + ": torn block at " + scan.lastGoodOffset() + "; resume the file before sealing it");
        }
        FooterBuilder builder = new FooterBuilder(zstd);
        try (BlockPrefetch blocks = new BlockPrefetch(ch, path, scan)) {
            for (int i = 0; i < scan.blockCount(); i++) {
                BlockView view = blocks.next();
                if (view.size() == 0) {
                    break;
                }
                builder.addBlock(scan.offsets()[i], scan.frameLengths()[i], view);
                blocks.release(view);
            }
        }
        return builder.build(footerOffset);
    }

    private static void restoreActive(SegmentIO io, FileChannel ch, Path path, long footerOffset, IOException cause) {
        try {
            io.write(ch, path, ByteBuffer.wrap(SegmentHeader.activeHeaderBytes()), 0);
            io.truncate(ch, path, footerOffset);
            io.fsync(ch, path);
        } catch (IOException e) {
            cause.addSuppressed(e);
        }
    }
}
