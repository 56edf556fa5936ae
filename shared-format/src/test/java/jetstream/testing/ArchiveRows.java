package jetstream.testing;

import java.io.IOException;
import java.nio.file.Path;
import jetstream.segment.ActiveSegmentReader;
import jetstream.segment.BlockView;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentReader;
import jetstream.segment.ZstdFrames;
import jetstream.segment.io.SegmentName;

/**
 * Test helper: an archive's {@code segments} directory read back row by row, sealed files and the
 * active one alike, in file and block order (what tests fold or compare against what they wrote).
 */
public final class ArchiveRows {
    private ArchiveRows() {}

    /** Hands every row of every segment file in {@code segmentsDir} to {@code consumer}; the view is reused. */
    public static void forEach(Path segmentsDir, SegmentReader.RowConsumer consumer) throws IOException {
        try (ZstdFrames zstd = new ZstdFrames()) {
            for (SegmentName.Entry e : SegmentName.scan(segmentsDir)) {
                if (java.nio.file.Files.size(e.path()) < jetstream.segment.SegmentLimits.HEADER_SIZE) {
                    continue; // an active segment whose creation a kill -9 interrupted: no rows (resume completes it)
                }
                try {
                    SegmentReader.open(e.path()).forEachRow(zstd, consumer);
                } catch (SegmentException ex) {
                    if (ex.type() != SegmentException.Type.ACTIVE_SEGMENT) {
                        throw ex;
                    }
                    ActiveSegmentReader a = ActiveSegmentReader.open(e.path());
                    BlockView view = new BlockView();
                    for (int b = 0; b < a.blockCount(); b++) {
                        a.block(b, view, zstd);
                        for (int i = 0; i < view.size(); i++) {
                            consumer.accept(b, view, i);
                        }
                    }
                }
            }
        }
    }
}
