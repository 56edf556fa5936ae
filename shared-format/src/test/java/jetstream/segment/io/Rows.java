package jetstream.segment.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import jetstream.segment.BlockBuilder;
import jetstream.segment.BlockView;

/**
 * Deterministic, realistic-looking rows derived from their seq alone, so a test (or a crash child
 * process) can write them and a checker can recompute and compare any row it reads back.
 */
final class Rows {
    private static final String[] COLLECTIONS = {
        "app.bsky.feed.post", "app.bsky.feed.like", "app.bsky.graph.follow", "app.bsky.feed.repost",
        "app.bsky.actor.profile"
    };
    private static final int[] KINDS = {1, 1, 1, 1, 2, 3, 1, 4, 1, 5, 6, 7};

    private Rows() {}

    static long witnessedAt(long seq) {
        return 1_750_000_000_000_000L + seq * 1000;
    }

    static int kind(long seq) {
        return KINDS[(int) (seq % KINDS.length)];
    }

    static byte[] did(long seq) {
        return ("did:plc:" + Long.toString(1_000_000_000L + (seq * 7919) % 101, 36) + "abcdefghijklm")
                .getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] collection(long seq) {
        int k = kind(seq);
        boolean commit = k <= 3 || k == 7;
        return commit ? COLLECTIONS[(int) (seq % COLLECTIONS.length)].getBytes(StandardCharsets.US_ASCII) : null;
    }

    static byte[] rkey(long seq) {
        return collection(seq) == null ? null : ("3l" + Long.toString(seq * 31 + 17, 32)).getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] rev(long seq) {
        int k = kind(seq);
        return (k == 4 || k == 5) ? null : ("3m" + Long.toString(seq / 3, 32)).getBytes(StandardCharsets.US_ASCII);
    }

    static byte[] payload(long seq) {
        if (kind(seq) == 3) {
            return null;
        }
        SplittableRandom r = new SplittableRandom(seq);
        byte[] p = new byte[40 + r.nextInt(300)];
        p[0] = (byte) 0xa4;
        for (int i = 1; i < p.length; i++) {
            // Text-like bytes so zstd has something to do, as real record CBOR does.
            p[i] = (byte) ('a' + r.nextInt(i % 7 == 0 ? 26 : 6));
        }
        return p;
    }

    static void add(BlockBuilder b, long seq) {
        b.add(seq, witnessedAt(seq), 0, kind(seq), did(seq), collection(seq), rkey(seq), rev(seq), payload(seq));
    }

    static void append(SegmentWriter w, long seq) {
        w.append(seq, witnessedAt(seq), 0, kind(seq), did(seq), collection(seq), rkey(seq), rev(seq), payload(seq));
    }

    /** Asserts row {@code i} of {@code v} is exactly what {@link #add} wrote for its seq. */
    static void check(BlockView v, int i) {
        long seq = v.seq(i);
        assertEquals(witnessedAt(seq), v.witnessedAt(i), "witnessed_at of seq " + seq);
        assertEquals(kind(seq), v.kindCode(i), "kind of seq " + seq);
        assertEquals(new String(did(seq), StandardCharsets.US_ASCII), v.did(i));
        assertEquals(str(collection(seq)), v.collection(i));
        assertEquals(str(rkey(seq)), v.rkey(i));
        assertEquals(str(rev(seq)), v.rev(i));
        assertArrayEquals(payload(seq), v.payload(i), "payload of seq " + seq);
    }

    private static String str(byte[] b) {
        return b == null ? "" : new String(b, StandardCharsets.US_ASCII);
    }
}
