package jetstream.ingester.compaction;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.atproto.cbor.CborWriter;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.segment.BlockIndexEntry;
import jetstream.segment.SegmentException;
import jetstream.segment.SegmentReader;
import jetstream.segment.io.SegmentName;
import jetstream.testing.ArchiveRows;

/**
 * Test model of compaction, written independently of the production fold: random histories of
 * creates, updates, deletes, identities, account changes (some of them deletions), syncs with
 * their resync creates; the archive read back row by row; the survivors the drop rule of
 * docs/lifecycle.md: Compaction predicts; and the fold a consumer computes.
 */
public final class History {
    public static final String[] COLLECTIONS = {"app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow"};

    public record Row(long seq, long witnessedAt, int kind, String did, String collection, String rkey, byte[] payload) {
        String key() {
            return collection + "/" + rkey;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Row r && seq == r.seq && witnessedAt == r.witnessedAt && kind == r.kind
                    && did.equals(r.did) && collection.equals(r.collection) && rkey.equals(r.rkey)
                    && Arrays.equals(payload, r.payload);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(seq);
        }

        @Override
        public String toString() {
            return "Row[" + seq + " k" + kind + " " + did + " " + collection + "/" + rkey + "]";
        }
    }

    /** One segment's block topology and envelopes, which compaction must not change. */
    public record Shape(String name, long minSeq, long maxSeq, long minWitnessed, long maxWitnessed, List<List<Long>> blocks) {}

    private History() {}

    /** {@code n} rows over {@code dids} DIDs, a few record keys each so updates and deletes hit. */
    public static List<ArchiveRow> generate(Random r, int n, int dids) {
        List<ArchiveRow> out = new ArrayList<>(n);
        while (out.size() < n) {
            String did = "did:plc:h" + r.nextInt(dids);
            String coll = COLLECTIONS[r.nextInt(COLLECTIONS.length)];
            String rkey = "3k" + r.nextInt(6);
            String rev = "3lrev" + out.size();
            int p = r.nextInt(100);
            if (p < 40) {
                out.add(new ArchiveRow(ArchiveRow.KIND_CREATE, did, coll, rkey, rev, record(r)));
            } else if (p < 58) {
                out.add(new ArchiveRow(ArchiveRow.KIND_UPDATE, did, coll, rkey, rev, record(r)));
            } else if (p < 73) {
                out.add(new ArchiveRow(ArchiveRow.KIND_DELETE, did, coll, rkey, rev, ByteSlice.EMPTY));
            } else if (p < 80) {
                out.add(new ArchiveRow(ArchiveRow.KIND_IDENTITY, did, "", "", "", cbor(w -> w.writeMapHeader(2)
                        .writeText("did").writeText(did).writeText("seq").writeInt(r.nextInt(1000)))));
            } else if (p < 90) {
                int shape = r.nextInt(4);
                out.add(new ArchiveRow(ArchiveRow.KIND_ACCOUNT, did, "", "", "", account(did, shape)));
            } else if (p < 94) {
                out.add(new ArchiveRow(ArchiveRow.KIND_SYNC, did, "", "", rev, cbor(w -> w.writeMapHeader(2)
                        .writeText("did").writeText(did).writeText("rev").writeText(rev))));
                for (int i = r.nextInt(4); i > 0; i--) {
                    out.add(new ArchiveRow(ArchiveRow.KIND_CREATE_RESYNC, did,
                            COLLECTIONS[r.nextInt(COLLECTIONS.length)], "3k" + r.nextInt(6), rev, record(r)));
                }
            } else {
                out.add(new ArchiveRow(ArchiveRow.KIND_CREATE_RESYNC, did, coll, rkey, rev, record(r)));
            }
        }
        return out;
    }

    private static ByteSlice record(Random r) {
        byte[] b = new byte[8 + r.nextInt(120)];
        r.nextBytes(b);
        return new ByteSlice(b, 0, b.length);
    }

    /**
     * Account bodies: deleted (the one DID tombstone shape), deactivated, active, and active=false
     * without a status; canonical key order (length first, then bytes).
     */
    private static ByteSlice account(String did, int shape) {
        boolean active = shape == 2;
        String status = shape == 0 ? "deleted" : shape == 1 ? "deactivated" : null;
        return cbor(w -> {
            w.writeMapHeader(status == null ? 3 : 4).writeText("did").writeText(did).writeText("seq").writeInt(7)
                    .writeText("active").writeBool(active);
            if (status != null) {
                w.writeText("status").writeText(status);
            }
        });
    }

    private static ByteSlice cbor(java.util.function.Consumer<CborWriter> body) {
        CborWriter w = new CborWriter();
        body.accept(w);
        byte[] b = w.toByteArray();
        return new ByteSlice(b, 0, b.length);
    }

    /** Whether an account body is a deletion, decided from how {@link #account} built it. */
    public static boolean accountDeleted(byte[] payload) {
        String s = new String(payload, StandardCharsets.ISO_8859_1);
        return s.contains("deleted") && s.contains("active\u00f4");
    }

    /** Every row of every segment file in {@code segments} (sealed and active), in file order. */
    public static List<Row> read(Path segments) throws IOException {
        List<Row> out = new ArrayList<>();
        ArchiveRows.forEach(segments, (block, v, i) -> out.add(
                new Row(v.seq(i), v.witnessedAt(i), v.kindCode(i), v.did(i), v.collection(i), v.rkey(i), v.payload(i))));
        return out;
    }

    /** The sealed files' shapes (block count, block and header envelopes). */
    public static List<Shape> shapes(Path segments) throws IOException {
        List<Shape> out = new ArrayList<>();
        for (SegmentName.Entry e : SegmentName.scan(segments)) {
            SegmentReader r;
            try {
                r = SegmentReader.open(e.path());
            } catch (SegmentException active) {
                continue;
            }
            List<List<Long>> blocks = new ArrayList<>();
            for (int b = 0; b < r.blockCount(); b++) {
                BlockIndexEntry x = r.entry(b);
                blocks.add(List.of(x.minSeq(), x.maxSeq(), x.minWitnessedAt(), x.maxWitnessedAt()));
            }
            out.add(new Shape(e.path().getFileName().toString(), r.header().minSeq(), r.header().maxSeq(),
                    r.header().minWitnessedAt(), r.header().maxWitnessedAt(), blocks));
        }
        return out;
    }

    /**
     * The rows the drop rule keeps once every tombstone at or below {@code covered} is applied: a
     * create, update or resync create goes when its record or DID has a covered tombstone with a
     * higher seq. Quadratic on purpose: it shares nothing with the production fold.
     */
    public static List<Row> survivors(List<Row> rows, long covered) {
        List<Row> out = new ArrayList<>();
        for (Row x : rows) {
            boolean materialization = x.kind == 1 || x.kind == 2 || x.kind == 7;
            boolean superseded = false;
            if (materialization) {
                for (Row t : rows) {
                    if (t.seq <= x.seq || t.seq > covered || !t.did.equals(x.did)) {
                        continue;
                    }
                    boolean recordTomb = (t.kind == 2 || t.kind == 3) && t.key().equals(x.key());
                    boolean didTomb = t.kind == 6 || t.kind == 5 && accountDeleted(t.payload);
                    if (recordTomb || didTomb) {
                        superseded = true;
                        break;
                    }
                }
            }
            if (!superseded) {
                out.add(x);
            }
        }
        return out;
    }

    /** A consumer's fold: creates, updates and resync creates set; deletes remove; syncs and account deletions clear the DID. */
    public static Map<String, Map<String, String>> fold(List<Row> rows) {
        Map<String, Map<String, String>> state = new HashMap<>();
        for (Row x : rows) {
            switch (x.kind) {
                case 1, 2, 7 -> state.computeIfAbsent(x.did, k -> new HashMap<>()).put(x.key(), Arrays.toString(x.payload));
                case 3 -> {
                    Map<String, String> m = state.get(x.did);
                    if (m != null) {
                        m.remove(x.key());
                    }
                }
                case 6 -> state.remove(x.did);
                case 5 -> {
                    if (accountDeleted(x.payload)) {
                        state.remove(x.did);
                    }
                }
                default -> { }
            }
        }
        state.values().removeIf(Map::isEmpty);
        return state;
    }
}
