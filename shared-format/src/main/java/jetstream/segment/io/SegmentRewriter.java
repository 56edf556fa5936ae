package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import jetstream.segment.BlockBuilder;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.ZstdFrames;

/**
 * The two rewrites of a sealed segment (facts §1.13), both through {@link TmpRewrite} so the
 * original stays untouched until the atomic rename: the timestamp-import patch (indexed_at only)
 * and the compaction rewrite (drop rows).
 */
public final class SegmentRewriter {
    private SegmentRewriter() {}

    /** The indexed_at a row should carry; returning the current value leaves the row alone. */
    @FunctionalInterface
    public interface IndexedAtStamp {
        long indexedAt(BlockView block, int row);
    }

    /**
     * Outcome of a rewrite.
     *
     * @param rewritten false when nothing changed and the file was not touched
     * @param rowsChanged rows re-stamped (patch) or dropped (compaction)
     * @param blocksReencoded blocks whose frame was rebuilt; the others were copied verbatim
     * @param sizeBefore file size before
     * @param sizeAfter file size after (== before when not rewritten)
     */
    public record Result(boolean rewritten, long rowsChanged, int blocksReencoded, long sizeBefore, long sizeAfter) {}

    /**
     * Re-stamps indexed_at. Touched blocks are re-encoded (their uncompressed size cannot change),
     * untouched ones copied verbatim; the block index gets the new offsets and compressed sizes and
     * the footer after it (blooms, collection index) is copied byte for byte. Zero changes leave the
     * file untouched.
     */
    public static Result patchIndexedAt(SegmentIO io, Path file, IndexedAtStamp stamp) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ); ZstdFrames zstd = new ZstdFrames()) {
            SealedFile sf = SealedFile.read(ch, file);
            long indexEnd = sf.footerOffset + (long) sf.blockCount * SealedFile.ENTRY_SIZE;
            if (sf.headerLong(SealedFile.OFF_DID_BLOOM) != indexEnd) {
                throw new SegmentException(SegmentException.Type.INVALID_FOOTER,
                        file + ": padding after the block index; cannot patch");
            }
            BlockView view = new BlockView();
            BlockBuilder rows = new BlockBuilder();
            byte[] index = new byte[sf.blockCount * SealedFile.ENTRY_SIZE];
            ByteBuffer idx = ByteBuffer.wrap(index).order(ByteOrder.LITTLE_ENDIAN);
            TmpRewrite tmp = null;
            long changed = 0;
            int reencoded = 0;
            try {
                for (int i = 0; i < sf.blockCount; i++) {
                    byte[] frame = sf.readFrame(ch, i);
                    view.decodeFrame(zstd, frame, 0, frame.length, sf.uncompressedSize(i));
                    int touched = 0;
                    rows.reset();
                    for (int r = 0; r < view.size(); r++) {
                        long want = stamp.indexedAt(view, r);
                        if (want != view.indexedAt(r)) {
                            touched++;
                        }
                        rows.add(view, r, want);
                    }
                    if (touched > 0 && tmp == null) {
                        tmp = TmpRewrite.begin(io, file);
                        tmp.append(new byte[ActiveSegment.HEADER_SIZE], 0, ActiveSegment.HEADER_SIZE);
                        copyBlocks(ch, sf, 0, i, tmp, idx);
                    }
                    if (tmp == null) {
                        continue;
                    }
                    if (touched == 0) {
                        copyBlocks(ch, sf, i, i + 1, tmp, idx);
                        continue;
                    }
                    System.arraycopy(sf.footer, i * SealedFile.ENTRY_SIZE, index, i * SealedFile.ENTRY_SIZE,
                            SealedFile.ENTRY_SIZE);
                    byte[] body = rows.toBody();
                    if (body.length != sf.uncompressedSize(i)) {
                        throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT,
                                file + ": block " + i + " changed size while patching indexed_at");
                    }
                    byte[] newFrame = zstd.compress(body, 0, body.length);
                    appendFramed(tmp, newFrame);
                    idx.putLong(i * SealedFile.ENTRY_SIZE, tmp.position() - 8 - newFrame.length);
                    idx.putInt(i * SealedFile.ENTRY_SIZE + 8, newFrame.length);
                    changed += touched;
                    reencoded++;
                }
                if (tmp == null) {
                    return new Result(false, 0, 0, ch.size(), ch.size());
                }
                long newFooterOffset = tmp.position();
                int tailLen = sf.footer.length - index.length;
                byte[] footer = new byte[sf.footer.length];
                System.arraycopy(index, 0, footer, 0, index.length);
                System.arraycopy(sf.footer, index.length, footer, index.length, tailLen);
                tmp.append(footer, 0, footer.length);
                byte[] header = sf.header.array().clone();
                ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
                long delta = newFooterOffset - sf.footerOffset;
                for (int off : new int[] {SealedFile.OFF_FOOTER, SealedFile.OFF_DID_BLOOM, SealedFile.OFF_BLOCK_BLOOMS,
                        SealedFile.OFF_COLLECTIONS, SealedFile.OFF_BLOCK_INDEX}) {
                    h.putLong(off, h.getLong(off) + delta);
                }
                h.putLong(SealedFile.OFF_CHECKSUM, 0);
                long sum = SealedFile.checksum(header, footer, 0, footer.length);
                if (sum == 0) {
                    throw new SegmentException(SegmentException.Type.CHECKSUM_MISMATCH,
                            file + ": patched checksum is zero, which would read as an active file");
                }
                h.putLong(SealedFile.OFF_CHECKSUM, sum);
                tmp.writeAt(header, 0);
                long sizeAfter = newFooterOffset + footer.length;
                tmp.commit();
                tmp = null;
                return new Result(true, changed, reencoded, sf.footerOffset + sf.footer.length, sizeAfter);
            } catch (RuntimeException e) {
                if (tmp != null) {
                    tmp.abort(e);
                }
                throw e;
            }
        } catch (IOException e) {
            throw new SegmentPersistenceException("reading", file, e);
        }
    }

    private static void appendFramed(TmpRewrite tmp, byte[] frame) {
        byte[] prefix = new byte[8];
        ByteBuffer.wrap(prefix).order(ByteOrder.LITTLE_ENDIAN).putLong(0, frame.length);
        tmp.append(prefix, 0, 8);
        tmp.append(frame, 0, frame.length);
    }

    /** Copies blocks {@code [from, to)} verbatim, recording their new offsets in {@code idx}. */
    private static void copyBlocks(FileChannel ch, SealedFile sf, int from, int to, TmpRewrite tmp, ByteBuffer idx)
            throws IOException {
        for (int i = from; i < to; i++) {
            System.arraycopy(sf.footer, i * SealedFile.ENTRY_SIZE, idx.array(), i * SealedFile.ENTRY_SIZE,
                    SealedFile.ENTRY_SIZE);
            idx.putLong(i * SealedFile.ENTRY_SIZE, tmp.position());
            appendFramed(tmp, sf.readFrame(ch, i));
        }
    }
}
