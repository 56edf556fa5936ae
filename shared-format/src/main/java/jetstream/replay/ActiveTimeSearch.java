package jetstream.replay;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.util.List;

import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;

/**
 * Maps a time to a seq inside the active segment(s): a binary search over the complete blocks'
 * witnessed ranges (a block's last row carries its newest time, since witnessed_at is non-decreasing
 * with seq), then a scan of the one block that holds the answer. Active blocks have no index, so each
 * probe decodes a block: about log2(blocks) decodes per cursor.
 */
public final class ActiveTimeSearch {
    /**
     * {@code seq}: the first row with seq ≥ from and witnessed_at ≥ ts, or -1 when every complete block
     * is older; {@code scannedTo}: the seq after the last complete block seen (or {@code from}), where
     * the readable log takes over.
     */
    public record Result(long seq, long scannedTo) {}

    private ActiveTimeSearch() {}

    public static Result find(List<SegmentName.Entry> active, long ts, long from, ZstdFrames zstd) {
        BlockView view = new BlockView();
        long scannedTo = from;
        for (SegmentName.Entry a : active) {
            ActiveSegmentReader r;
            try {
                r = ActiveSegmentReader.open(a.path());
            } catch (NoSuchFileException | SegmentException sealedOrGone) {
                // Sealed or merged away since the snapshot: stop here, the caller stays conservative.
                return new Result(-1, scannedTo);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot open active segment " + a.path(), e);
            }
            int n = r.blockCount();
            if (n == 0) {
                continue;
            }
            int lo = 0;
            int hi = n;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                r.block(mid, view, zstd);
                if (view.size() > 0 && view.witnessedAt(view.size() - 1) >= ts
                        && view.seq(view.size() - 1) >= from) {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            if (lo < n) {
                r.block(lo, view, zstd);
                for (int i = 0; i < view.size(); i++) {
                    if (view.seq(i) >= from && view.witnessedAt(i) >= ts) {
                        return new Result(view.seq(i), scannedTo);
                    }
                }
            }
            r.block(n - 1, view, zstd);
            if (view.size() > 0) {
                scannedTo = Math.max(scannedTo, view.seq(view.size() - 1) + 1);
            }
        }
        return new Result(-1, scannedTo);
    }
}
