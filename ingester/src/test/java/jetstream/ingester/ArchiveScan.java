package jetstream.ingester;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import jetstream.feed.FeedFrame;
import jetstream.segment.BlockView;
import jetstream.testing.ArchiveRows;

/** Test helper: every row of {@code data/segments}, in file and block order, as feed events. */
public final class ArchiveScan {
    private ArchiveScan() {}

    /** Row {@code i} of a block as a feed event (fields copied out of the reused view). */
    public static FeedFrame.Event event(BlockView v, int i) {
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
        ArchiveRows.forEach(dataDir.resolve("segments"), (block, view, row) -> out.add(event(view, row)));
        return out;
    }
}
