package jetstream.segment.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntPredicate;
import jetstream.segment.BlockBuilder;
import jetstream.segment.BlockDidColumn;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.BlockView;
import jetstream.segment.Footer;
import jetstream.segment.FooterBuilder;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentLimits;
import jetstream.segment.ZstdFrames;

/**
 * The two rewrites of a sealed segment (docs/segment-format.md), both through {@link TmpRewrite} so the
 * original stays untouched until the atomic rename. Blocks a rewrite does not change are copied
 * verbatim; the rewrite starts lazily at the first changed block, so a pass that changes nothing
 * writes nothing.
 */
public final class SegmentRewriter {
    private static final byte[] EMPTY_BODY = new byte[4];

    private SegmentRewriter() {}

    /** The indexed_at a row should carry; returning the current value leaves the row alone. */
    @FunctionalInterface
    public interface IndexedAtStamp {
        long indexedAt(BlockView block, int row);
    }

    /** Whether compaction keeps a row. */
    @FunctionalInterface
    public interface RowFilter {
        boolean keep(BlockView block, int row);
    }

    /**
     * Outcome of a rewrite.
     *
     * @param rewritten false when nothing changed and the file was not touched
     * @param rowsChanged rows re-stamped (patch) or dropped (compaction)
     * @param blocksReencoded blocks whose frame was rebuilt; the others were copied verbatim
     * @param blocksDecoded blocks decompressed (re-encoded ones included); the others were copied unread
     * @param sizeBefore file size before
     * @param sizeAfter file size after (== before when not rewritten)
     */
    public record Result(boolean rewritten, long rowsChanged, int blocksReencoded, int blocksDecoded, long sizeBefore,
                         long sizeAfter) {}

    /**
     * The timestamp-import patch: only indexed_at changes. Touched blocks are re-encoded (their
     * uncompressed size cannot change); the block index gets new offsets and compressed sizes and
     * the footer after it (blooms, collection index) is copied byte for byte.
     */
    public static Result patchIndexedAt(SegmentIO io, Path file, IndexedAtStamp stamp) {
        return patchIndexedAt(io, file, block -> true, stamp);
    }

    /**
     * As {@link #patchIndexedAt(SegmentIO, Path, IndexedAtStamp)}, but blocks {@code candidates}
     * rules out (by their DID bloom) are copied verbatim without being decompressed.
     */
    public static Result patchIndexedAt(SegmentIO io, Path file, IntPredicate candidates, IndexedAtStamp stamp) {
        return rewrite(io, file, new Pass() {
            private final BlockBuilder rows = new BlockBuilder();
            private final List<BlockIndexEntry> entries = new ArrayList<>();

            @Override
            public boolean mayChange(int block) {
                return candidates.test(block);
            }

            @Override
            public int change(BlockView view) {
                int touched = 0;
                rows.reset();
                for (int r = 0; r < view.size(); r++) {
                    long want = stamp.indexedAt(view, r);
                    if (want != view.indexedAt(r)) {
                        touched++;
                    }
                    rows.add(view, r, want);
                }
                return touched;
            }

            @Override
            public byte[] newBody(BlockView view, BlockIndexEntry original) {
                byte[] body = rows.toBody();
                if (body.length != original.uncompressedSize()) {
                    throw new SegmentException(SegmentException.Type.CORRUPT_SEGMENT,
                            file + ": a block changed size while patching indexed_at");
                }
                return body;
            }

            @Override
            public void placed(long offset, long compressedSize, BlockView view, BlockIndexEntry original) {
                entries.add(original.withPlacement(offset, compressedSize));
            }

            @Override
            public Footer footer(SealedFile sf, long footerOffset, FooterBuilder.BlockLoader originals) {
                int indexLen = sf.blockCount() * BlockIndexEntry.SIZE;
                byte[] tail = Arrays.copyOfRange(sf.footer, indexLen, sf.footer.length);
                return FooterBuilder.patchBlockIndex(sf.header, entries, tail, footerOffset);
            }
        });
    }

    /**
     * The compaction rewrite: rows the filter rejects are dropped. Blocks without drops are copied
     * verbatim, blocks with drops re-encoded, an all-dropped block becomes the empty body (blocks
     * are never removed, so block numbers stay stable). Block and header seq/witnessed bounds are
     * kept from the original as envelopes; counts, blooms and the collection index are rebuilt from
     * the surviving rows. Nothing dropped leaves the file untouched.
     */
    public static Result compact(SegmentIO io, Path file, RowFilter filter) {
        return compact(io, file, block -> true, filter);
    }

    /**
     * As {@link #compact(SegmentIO, Path, RowFilter)}, but blocks {@code mayDrop} rules out (from the
     * original footer's blooms and collection index) are copied without being decompressed, and the
     * footer reuses their blooms and bitmasks where that provably gives the same bytes as a rewrite
     * that decoded them ({@link FooterBuilder#rewriteOf}). {@code mayDrop} must not rule out a block
     * holding a row the filter drops: such a row would be kept.
     */
    public static Result compact(SegmentIO io, Path file, IntPredicate mayDrop, RowFilter filter) {
        return rewrite(io, file, new Pass() {
            private final BlockBuilder rows = new BlockBuilder();
            private final BlockView rebuilt = new BlockView();
            private FooterBuilder footer;

            @Override
            public boolean mayChange(int block) {
                // a block whose collections' order needs its rows is decoded (and copied when unchanged)
                return mayDrop.test(block) || !footer.canAddVerbatim();
            }

            @Override
            public int change(BlockView view) {
                int dropped = 0;
                rows.reset();
                for (int r = 0; r < view.size(); r++) {
                    if (filter.keep(view, r)) {
                        rows.add(view, r);
                    } else {
                        footer.dropped(view, r);
                        dropped++;
                    }
                }
                return dropped;
            }

            @Override
            public byte[] newBody(BlockView view, BlockIndexEntry original) {
                return rows.isEmpty() ? EMPTY_BODY : rows.toBody();
            }

            @Override
            public void placed(long offset, long compressedSize, BlockView view, BlockIndexEntry original) {
                if (view == null) {
                    footer.addVerbatimBlock(offset, compressedSize, original);
                } else {
                    footer.addBlock(offset, compressedSize, view, original);
                }
            }

            @Override
            public BlockView decodeNew(byte[] body) {
                return rebuilt.decode(body, 0, body.length);
            }

            @Override
            public void start(SealedFile sf, ZstdFrames zstd) {
                footer = new FooterBuilder(zstd).rewriteOf(sf.header, sf.footer);
            }

            @Override
            public Footer footer(SealedFile sf, long footerOffset, FooterBuilder.BlockLoader originals) {
                return footer.buildRewrite(footerOffset, originals);
            }
        });
    }

    /** One rewrite's per-block decisions; {@link #rewrite} owns the file handling. */
    private interface Pass {
        default void start(SealedFile sf, ZstdFrames zstd) {}

        /** False when block {@code i} cannot change: it is copied without being decoded. */
        default boolean mayChange(int block) {
            return true;
        }

        /** Decides the block's new rows; returns how many rows change (0 = copy verbatim). */
        int change(BlockView view);

        /** The new uncompressed body of a block {@link #change} touched. */
        byte[] newBody(BlockView view, BlockIndexEntry original);

        /** A view of a new body, for passes whose footer needs the new rows. */
        default BlockView decodeNew(byte[] body) {
            return null;
        }

        /** The block now sits at {@code offset}; {@code view} holds its rows (null when it was not decoded). */
        void placed(long offset, long compressedSize, BlockView view, BlockIndexEntry original);

        /** The new footer; {@code originals} decodes an original block the pass copied unread. */
        Footer footer(SealedFile sf, long footerOffset, FooterBuilder.BlockLoader originals);
    }

    private static Result rewrite(SegmentIO io, Path file, Pass pass) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ); ZstdFrames zstd = new ZstdFrames()) {
            SealedFile sf = SealedFile.read(ch, file);
            long sizeBefore = ch.size();
            pass.start(sf, zstd);
            BlockView view = new BlockView();
            TmpRewrite tmp = null;
            long changed = 0;
            int reencoded = 0;
            int[] decoded = {0};
            try {
                for (int i = 0; i < sf.blockCount(); i++) {
                    BlockIndexEntry original = sf.entry(i);
                    if (!pass.mayChange(i)) {
                        // before the first change the block stays where it is (copyRegion): not even read
                        long at = original.offset();
                        if (tmp != null) {
                            at = tmp.position();
                            copyFramed(ch, sf, i, tmp);
                        }
                        pass.placed(at, original.compressedSize(), null, original);
                        continue;
                    }
                    byte[] frame = sf.readFrame(ch, i);
                    decoded[0]++;
                    view.decodeFrame(zstd, frame, 0, frame.length, original.uncompressedSize());
                    int n = pass.change(view);
                    if (n > 0 && tmp == null) {
                        // Blocks before the first change keep their offsets: copy that region as is.
                        tmp = TmpRewrite.begin(io, file);
                        copyRegion(ch, original.offset(), tmp);
                    }
                    if (n == 0) {
                        if (tmp != null) {
                            appendFramed(tmp, frame, frame.length);
                        }
                        pass.placed(tmp == null ? original.offset() : tmp.position() - 8 - frame.length,
                                frame.length, view, original);
                        continue;
                    }
                    byte[] body = pass.newBody(view, original);
                    byte[] newFrame = zstd.compress(body, 0, body.length);
                    appendFramed(tmp, newFrame, newFrame.length);
                    BlockView rows = pass.decodeNew(body);
                    pass.placed(tmp.position() - 8 - newFrame.length, newFrame.length, rows == null ? view : rows, original);
                    changed += n;
                    reencoded++;
                }
                if (tmp == null) {
                    return new Result(false, 0, 0, decoded[0], sizeBefore, sizeBefore);
                }
                long footerOffset = tmp.position();
                Footer footer = pass.footer(sf, footerOffset, new FooterBuilder.BlockLoader() {
                    private final BlockView originalView = new BlockView();
                    private final BlockDidColumn didColumn = new BlockDidColumn();

                    @Override
                    public BlockView load(int b) {
                        byte[] f = frame(b);
                        return originalView.decodeFrame(zstd, f, 0, f.length, sf.entry(b).uncompressedSize());
                    }

                    @Override
                    public void dids(int b, BlockDidColumn.Sink sink) {
                        byte[] f = frame(b);
                        didColumn.read(zstd, f, 0, f.length, sf.entry(b).uncompressedSize(), sink);
                    }

                    private byte[] frame(int b) {
                        try {
                            decoded[0]++;
                            return sf.readFrame(ch, b);
                        } catch (IOException e) {
                            throw new SegmentPersistenceException("reading", file, e);
                        }
                    }
                });
                tmp.append(footer.footerBytes(), 0, footer.footerBytes().length);
                tmp.writeAt(footer.headerBytes(), 0);
                tmp.commit();
                tmp = null;
                return new Result(true, changed, reencoded, decoded[0], sizeBefore, footer.fileSize());
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

    /** Copies {@code [0, end)} of the original (header region placeholder and unchanged blocks). */
    private static void copyRegion(FileChannel ch, long end, TmpRewrite tmp) throws IOException {
        byte[] buf = new byte[1 << 20];
        tmp.append(new byte[SegmentLimits.HEADER_SIZE], 0, SegmentLimits.HEADER_SIZE);
        for (long p = SegmentLimits.HEADER_SIZE; p < end; ) {
            int n = (int) Math.min(buf.length, end - p);
            Channels.readFully(ch, ByteBuffer.wrap(buf, 0, n), p);
            tmp.append(buf, 0, n);
            p += n;
        }
    }

    /** Appends block {@code i}'s prefix and frame from the original as they are. */
    private static void copyFramed(FileChannel ch, SealedFile sf, int i, TmpRewrite tmp) throws IOException {
        byte[] frame = sf.readFrame(ch, i);
        appendFramed(tmp, frame, frame.length);
    }

    private static void appendFramed(TmpRewrite tmp, byte[] frame, int len) {
        byte[] prefix = new byte[8];
        ByteBuffer.wrap(prefix).order(ByteOrder.LITTLE_ENDIAN).putLong(0, len);
        tmp.append(prefix, 0, 8);
        tmp.append(frame, 0, len);
    }
}
