package jetstream.ingester;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jetstream.feed.FeedFrame;
import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;

/** Test helper: every row of {@code data/segments}, in file and block order, as feed events. */
public final class ArchiveScan {
    private ArchiveScan() {}

    static FeedFrame.Event event(BlockView v, int i) {
        byte[] b = v.buffer();
        return new FeedFrame.Event(v.seq(i), v.witnessedAt(i), v.indexedAt(i), v.kindCode(i),
                java.util.Arrays.copyOfRange(b, v.didOffset(i), v.didOffset(i) + v.didLength(i)),
                java.util.Arrays.copyOfRange(b, v.collectionOffset(i), v.collectionOffset(i) + v.collectionLength(i)),
                java.util.Arrays.copyOfRange(b, v.rkeyOffset(i), v.rkeyOffset(i) + v.rkeyLength(i)),
                java.util.Arrays.copyOfRange(b, v.revOffset(i), v.revOffset(i) + v.revLength(i)),
                v.payload(i) == null ? new byte[0] : v.payload(i));
    }

    public static List<FeedFrame.Event> events(Path dataDir) throws IOException {
        List<FeedFrame.Event> out = new ArrayList<>();
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (SegmentName.Entry e : SegmentName.scan(dataDir.resolve("segments"))) {
                try {
                    SegmentReader r = SegmentReader.open(e.path());
                    r.forEachRow(zstd, (block, view, row) -> out.add(event(view, row)));
                } catch (SegmentException ex) {
                    if (ex.type() != SegmentException.Type.ACTIVE_SEGMENT) {
                        throw ex;
                    }
                    ActiveSegmentReader a = ActiveSegmentReader.open(e.path());
                    BlockView view = new BlockView();
                    for (int b = 0; b < a.blockCount(); b++) {
                        a.block(b, view, zstd);
                        for (int i = 0; i < view.size(); i++) {
                            out.add(event(view, i));
                        }
                    }
                }
            }
        }
        return out;
    }
}
