package jetstream.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.json.JsonToCbor;
import jetstream.planner.Manifest;
import jetstream.planner.SegmentSummary;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentName;
import jetstream.segment.io.SegmentWriter;

/**
 * A deterministic event history for client tests: rows 1..total of every kind over a handful of
 * DIDs and collections; rows 1..sealedThrough are written to real sealed segments with
 * {@link SegmentWriter} (small blocks and segments, so plans have many units), the rest exist only
 * on the live tail.
 */
public final class TestArchive {
    static final String[] DIDS = {"did:plc:alice", "did:plc:bob", "did:plc:carol", "did:plc:dave", "did:web:eve.test"};
    static final String[] COLLECTIONS = {"app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow"};
    private static final String TID_CHARS = "234567abcdefghijklmnopqrstuvwxyz";
    static final long T0 = 1_700_000_000_000_000L;

    /** One stored row. */
    public record Row(long seq, int kind, String did, String collection, String rkey, String rev, byte[] payload) {
        long time() {
            return T0 + seq * 1000;
        }
    }

    public final List<Row> rows = new ArrayList<>();
    final long sealedThrough;
    public volatile Manifest manifest = Manifest.EMPTY;
    final Path dir;

    public TestArchive(Path dir, int total, long sealedThrough, int eventsPerBlock, long segmentBytes) throws IOException {
        this.dir = dir;
        this.sealedThrough = sealedThrough;
        for (long s = 1; s <= total; s++) {
            rows.add(row(s));
        }
        try (SegmentWriter w = SegmentWriter.open(dir, new SegmentWriter.Config(eventsPerBlock, segmentBytes, Duration.ZERO))) {
            for (Row r : rows) {
                if (r.seq > sealedThrough) {
                    break;
                }
                w.append(r.seq, r.time(), 0, r.kind, bytes(r.did), bytes(r.collection), bytes(r.rkey), bytes(r.rev),
                        r.payload);
            }
            w.seal();
        }
        reloadManifest();
    }

    /** Serves the sealed segments already in {@code dir} (no generated rows, nothing live). */
    public TestArchive(Path dir) throws IOException {
        this.dir = dir;
        reloadManifest();
        this.sealedThrough = manifest.sealedTipSeq();
    }

    void reloadManifest() throws IOException {
        reloadManifest(Long.MAX_VALUE);
    }

    /** Publishes only the sealed segments whose rows all lie at or below {@code maxSeq}. */
    void reloadManifest(long maxSeq) throws IOException {
        List<SegmentSummary> sums = new ArrayList<>();
        for (SegmentName.Entry e : SegmentName.scan(dir)) {
            SegmentReader r = SegmentReader.open(e.path());
            if (r.header().maxSeq() > maxSeq) {
                continue;
            }
            sums.add(SegmentSummary.of(r, e.path().getFileName().toString(), e.index(), 0));
        }
        manifest = Manifest.of(sums);
    }

    private static byte[] bytes(String s) {
        return s.isEmpty() ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    static String tid(long n) {
        char[] c = new char[13];
        long v = n + (1L << 50);
        for (int i = 12; i >= 0; i--) {
            c[i] = TID_CHARS.charAt((int) (v & 31));
            v >>>= 5;
        }
        return new String(c);
    }

    static Row row(long seq) {
        String did = DIDS[(int) (seq % DIDS.length)];
        String time = java.time.Instant.ofEpochSecond(0, (T0 + seq * 1000) * 1000).toString();
        if (seq % 29 == 0) {
            byte[] body = JsonToCbor.toCbor("{\"active\":" + (seq % 58 != 0) + ",\"did\":\"" + did + "\",\"seq\":" + seq
                    + (seq % 58 == 0 ? ",\"status\":\"deleted\"" : "") + ",\"time\":\"" + time + "\"}");
            return new Row(seq, 5, did, "", "", "", body);
        }
        if (seq % 31 == 0) {
            byte[] body = JsonToCbor.toCbor("{\"did\":\"" + did + "\",\"handle\":\"h" + seq + ".test\",\"seq\":" + seq
                    + ",\"time\":\"" + time + "\"}");
            return new Row(seq, 4, did, "", "", "", body);
        }
        if (seq % 37 == 0) {
            byte[] body = JsonToCbor.toCbor("{\"blocks\":{\"$bytes\":\"\"},\"did\":\"" + did + "\",\"rev\":\"" + tid(seq)
                    + "\",\"seq\":" + seq + ",\"time\":\"" + time + "\"}");
            return new Row(seq, 6, did, "", "", tid(seq), body);
        }
        String coll = COLLECTIONS[(int) ((seq / 3) % COLLECTIONS.length)];
        // Records are rewritten and deleted by key so the fold has something to converge on.
        String rkey = tid(seq % 11);
        int kind = seq % 7 == 0 ? 3 : seq % 5 == 0 ? 2 : seq % 41 == 0 ? 7 : 1;
        byte[] record = kind == 3 ? null : JsonToCbor.toCbor("{\"$type\":\"" + coll + "\",\"createdAt\":\"" + time
                + "\",\"text\":\"row " + seq + "\"}");
        return new Row(seq, kind, did, coll, rkey, tid(seq), record);
    }
}
