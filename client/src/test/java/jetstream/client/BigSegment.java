package jetstream.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.SplittableRandom;
import jetstream.atproto.json.JsonToCbor;
import jetstream.segment.io.SegmentWriter;

/** Writes one sealed segment of incompressible records, so its file is about rows × recordBytes. */
final class BigSegment {
    private BigSegment() {}

    static final String DID = "did:plc:big";

    static void write(Path dir, int rows, int recordBytes, int eventsPerBlock) throws IOException {
        SplittableRandom rnd = new SplittableRandom(21);
        byte[] blob = new byte[recordBytes];
        byte[] did = DID.getBytes(StandardCharsets.UTF_8);
        byte[] coll = "app.bsky.feed.post".getBytes(StandardCharsets.UTF_8);
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(eventsPerBlock, 1L << 30, Duration.ZERO))) {
            for (int seq = 1; seq <= rows; seq++) {
                rnd.nextBytes(blob);
                byte[] record = JsonToCbor.toCbor("{\"$type\":\"app.bsky.feed.post\",\"blob\":{\"$bytes\":\""
                        + Base64.getEncoder().withoutPadding().encodeToString(blob) + "\"}}");
                String rkey = TestArchive.tid(seq);
                w.append(seq, TestArchive.T0 + seq, 0, 1, did, coll, rkey.getBytes(StandardCharsets.UTF_8),
                        rkey.getBytes(StandardCharsets.UTF_8), record);
            }
            w.seal();
        }
    }
}
