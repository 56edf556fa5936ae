package jetstream.replay;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentHeader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;

/**
 * The ingester's side of a feed reader's {@code READ_ACTIVE} (docs/feed-protocol.md): the complete
 * blocks of the active segment files of a segments directory, as the zstd frames on disk, from the
 * block holding a seq on. Only blocks at or below the durable watermark are handed out: their bytes
 * at their offset are final (a crash cuts a file only after its last durable block, and the seal
 * appends), so a reader may cache them by (segment, offset). Active blocks have no index: a block's
 * seq envelope is read by decoding it once and kept while its file is active (a few thousand small
 * entries per active file). Thread-safe; the writer is never touched or waited for.
 */
public final class ActiveBlockSource {
    /** Receives the blocks of one answer, in seq order. */
    @FunctionalInterface
    public interface Sink {
        void block(long segment, long offset, long minSeq, long maxSeq, int eventCount, byte[] frame) throws IOException;
    }

    private record Envelope(long minSeq, long maxSeq, int eventCount, long maxWitnessedAt) {}

    private final Path dir;
    /** Seq envelopes by active file index, then frame offset. */
    private final Map<Long, Map<Long, Envelope>> envelopes = new ConcurrentHashMap<>();

    public ActiveBlockSource(Path dir) {
        this.dir = dir;
    }

    /**
     * Hands {@code sink} the durable complete blocks holding seqs in {@code [from, until)} ({@code until}
     * 0: no bound) and rows witnessed at or after {@code fromTime} (witnessed times never decrease with
     * seq, so the blocks before the first such one are skipped), in seq order, stopping once
     * {@code maxBytes} of frames were handed (at least one block when any qualifies). Returns the seq
     * after the last sealed segment (1 when none is): seqs below it are the archive's, never answered here.
     */
    public long read(long from, long until, long fromTime, long durableSeq, long maxBytes, ZstdFrames zstd, Sink sink)
            throws IOException {
        List<SegmentName.Entry> entries = SegmentName.scan(dir);
        List<SegmentName.Entry> active = new ArrayList<>();
        long activeFrom = 1;
        // the active files follow the last sealed one: read headers from the newest back to it
        for (int i = entries.size() - 1; i >= 0; i--) {
            SegmentHeader h;
            try {
                h = SegmentCatalog.readHeader(entries.get(i).path());
            } catch (NoSuchFileException mergedAway) {
                continue;
            }
            if (h != null) {
                activeFrom = h.maxSeq() + 1;
                break;
            }
            active.add(0, entries.get(i));
        }
        forgetAllBut(active);
        BlockView view = new BlockView();
        long sent = 0;
        for (SegmentName.Entry a : active) {
            ActiveSegmentReader r;
            try {
                r = ActiveSegmentReader.open(a.path());
            } catch (NoSuchFileException | SegmentException sealedOrGone) {
                // sealed since the listing: the reader learns the new activeFrom on its next request
                return activeFrom;
            }
            long[] offsets = r.scan().offsets();
            for (int b = 0; b < r.blockCount(); b++) {
                Envelope e = envelope(a.index(), offsets[b], r, b, view, zstd);
                if (e == null || e.maxSeq() < from || e.maxWitnessedAt() < fromTime) {
                    continue;
                }
                if (e.maxSeq() > durableSeq || (until > 0 && e.minSeq() >= until) || (sent > 0 && sent >= maxBytes)) {
                    return activeFrom;
                }
                byte[] frame = r.frameBytes(b);
                sink.block(a.index(), offsets[b], e.minSeq(), e.maxSeq(), e.eventCount(), frame);
                sent += frame.length;
            }
        }
        return activeFrom;
    }

    /** The envelope of a block, decoding it the first time; null for a block without rows. */
    private Envelope envelope(long segment, long offset, ActiveSegmentReader r, int block, BlockView view,
                              ZstdFrames zstd) {
        Map<Long, Envelope> bySegment = envelopes.computeIfAbsent(segment, k -> new ConcurrentHashMap<>());
        Envelope e = bySegment.get(offset);
        if (e == null) {
            r.block(block, view, zstd);
            if (view.size() == 0) {
                return null;
            }
            e = new Envelope(view.seq(0), view.seq(view.size() - 1), view.size(), view.witnessedAt(view.size() - 1));
            bySegment.put(offset, e);
        }
        return e;
    }

    private void forgetAllBut(List<SegmentName.Entry> active) {
        Set<Long> keep = ConcurrentHashMap.newKeySet();
        for (SegmentName.Entry a : active) {
            keep.add(a.index());
        }
        envelopes.keySet().retainAll(keep);
    }

    /** Envelopes held (a test's view of the bound). */
    int envelopeCount() {
        return envelopes.values().stream().mapToInt(Map::size).sum();
    }
}
