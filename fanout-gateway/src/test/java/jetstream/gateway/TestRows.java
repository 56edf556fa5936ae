package jetstream.gateway;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import jetstream.atproto.cbor.CborWriter;
import jetstream.segment.io.SegmentWriter;

/** Random but valid archive rows (real DAG-CBOR payloads) for gateway tests. */
final class TestRows {
    static final String[] COLLECTIONS = {
        "app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow", "app.bsky.feed.repost",
        "app.bsky.actor.profile", "com.example.thing"
    };
    static final long BASE_TIME = 1_780_000_000_000_000L;

    record Row(long seq, long witnessedAt, int kind, String did, String collection, String rkey, String rev,
               byte[] payload) {
        GatewayEvent encode(EventEncoder enc) {
            byte[] p = payload == null ? new byte[0] : payload;
            return enc.encode(seq, witnessedAt, kind, did, collection, rkey, rev, p, 0, p.length);
        }

        void append(SegmentWriter w) {
            w.append(seq, witnessedAt, 0, kind, bytes(did), bytes(collection), bytes(rkey), bytes(rev), payload);
        }
    }

    private TestRows() {}

    static String did(int i) {
        return "did:plc:" + String.format("%024d", i).replace('0', 'a').replace('1', 'b');
    }

    /** Rows with seqs {@code first, first+1, ...}; DIDs from a pool of {@code dids}. */
    static List<Row> rows(SplittableRandom r, long first, int n, int dids) {
        List<Row> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(row(r, first + i, did(r.nextInt(dids))));
        }
        return out;
    }

    static Row row(SplittableRandom r, long seq, String did) {
        int pick = r.nextInt(20);
        int kind = pick < 12 ? 1 : pick < 14 ? 2 : pick < 16 ? 3 : pick == 16 ? 4 : pick == 17 ? 5 : pick == 18 ? 6 : 7;
        long t = BASE_TIME + seq * 1000;
        String collection = "";
        String rkey = "";
        String rev = "3m" + Long.toString(seq, 32);
        byte[] payload;
        CborWriter w = new CborWriter();
        String time = "2026-05-25T14:23:29.950Z";
        switch (kind) {
            case 4 -> {
                rev = "";
                w.writeMapHeader(3).writeText("did").writeText(did).writeText("seq").writeInt(seq + 100)
                        .writeText("time").writeText(time);
                payload = w.toByteArray();
            }
            case 5 -> {
                rev = "";
                w.writeMapHeader(4).writeText("did").writeText(did).writeText("seq").writeInt(seq + 100)
                        .writeText("time").writeText(time).writeText("active").writeBool(true);
                payload = w.toByteArray();
            }
            case 6 -> {
                w.writeMapHeader(5).writeText("did").writeText(did).writeText("rev").writeText(rev)
                        .writeText("seq").writeInt(seq + 100).writeText("time").writeText(time)
                        .writeText("blocks").writeBytes(new byte[] {1, 2, 3});
                payload = w.toByteArray();
            }
            default -> {
                collection = COLLECTIONS[r.nextInt(COLLECTIONS.length)];
                rkey = "3l" + Long.toString(seq * 31 + 17, 32);
                if (kind == 3) {
                    payload = null;
                } else {
                    w.writeMapHeader(3).writeText("text").writeText("hello <" + seq + "> & more")
                            .writeText("$type").writeText(collection).writeText("createdAt").writeText(time);
                    payload = w.toByteArray();
                }
            }
        }
        return new Row(seq, t, kind, did, collection, rkey, rev, payload);
    }

    private static byte[] bytes(String s) {
        return s == null || s.isEmpty() ? null : s.getBytes(StandardCharsets.UTF_8);
    }
}
