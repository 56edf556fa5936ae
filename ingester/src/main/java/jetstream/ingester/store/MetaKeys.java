package jetstream.ingester.store;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import jetstream.feed.Vacancy;

/**
 * The metadata key space (docs/metadata-keys.md) and the value encodings this module writes.
 * Keys are ASCII; {@code <did>} verbatim.
 */
public final class MetaKeys {
    /** Exact durable coverage frontier (events plus registered vacancies): 8 bytes u64 LE. */
    public static final String SEQ_NEXT = "seq/next";
    /** Next seq of the bootstrap live-capture tree {@code backfill/live_segments}: 8 bytes u64 LE. */
    public static final String LIVE_SEGMENTS_SEQ_NEXT = "live_segments/seq/next";
    /**
     * The witnessed_at (unix µs) of the last row of a durable block of {@code data/segments}: {@code 0x01} + u64 LE,
     * the floor the writer clamps to after a restart (ours, not the reference's; docs/metadata-keys.md).
     */
    public static final String WITNESSED_AT = "seq/witnessed_at";
    /** {@link #WITNESSED_AT} of the bootstrap live-capture tree. */
    public static final String LIVE_SEGMENTS_WITNESSED_AT = "live_segments/seq/witnessed_at";
    /** Exclusive end of the steady writer's durable seq lease: 8 bytes u64 LE (same encoding as seq/next). */
    public static final String SEQ_MAX_RESERVED = "seq/max_reserved";
    /** {@code seq/gap/<8-byte BE start>} → {@code 0x01, reason u8, end u64 LE}. */
    public static final String SEQ_GAP_PREFIX = "seq/gap/";
    /** Upstream relay cursor: {@code 0x01} + u64 LE. */
    public static final String RELAY_CURSOR = "relay/cursor";
    /** Highest seq fully covered by physical compaction: {@code 0x01} + u64 LE; absent = 0. */
    public static final String COMPACTION_SEQ = "compaction/seq";
    public static final String PHASE = "phase";
    public static final String PHASE_ENTERED_AT = "phase/entered_at";
    /** RFC 3339 nanos UTC: when bootstrap began / the backfill drained (diagnostics, docs/metadata-keys.md). */
    public static final String BACKFILL_TIMING_STARTED_AT = "backfill/timing/started_at";
    public static final String BACKFILL_TIMING_COMPLETED_AT = "backfill/timing/completed_at";
    /** Merge progress: {@code 0x01} + u64 LE, the next {@code live_segments} index to drain. */
    public static final String MERGE_NEXT_SOURCE_IDX = "merge/next_source_idx";
    /**
     * {@code 0x01} + u64 LE: the archive's next seq when draining {@code merge/next_source_idx}
     * began (this implementation): rows at or above it came from that file, so a resumed drain
     * skips the ones already durable instead of appending them twice.
     */
    public static final String MERGE_SOURCE_BASE_SEQ = "merge/source_base_seq";
    public static final String REPO_PREFIX = "repo/";
    public static final String SYNC_IDENT_PREFIX = "sync/ident/";
    public static final String SYNC_ACCT_PREFIX = "sync/acct/";
    /** Verifier hosting state from {@code #account} (encoding: {@code jetstream.ingester.live.HostingState}). */
    public static final String SYNC_HOST_PREFIX = "sync/host/";
    public static final String SYNC_IDENTITY_PREFIX = "sync/identity/";
    public static final String SYNC_CHAIN_PREFIX = "sync/chain/";

    private MetaKeys() {}

    public static byte[] u64le(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    /** An 8-byte u64 LE value; absent is 0. Any other length is our own corruption. */
    public static long readU64le(String key, byte[] v) {
        if (v == null) {
            return 0;
        }
        if (v.length != 8) {
            throw new IllegalStateException("metadata key " + key + " holds " + v.length + " bytes, expected 8");
        }
        return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    public static byte[] versionedU64le(long v) {
        return ByteBuffer.allocate(9).order(ByteOrder.LITTLE_ENDIAN).put((byte) 1).putLong(v).array();
    }

    /** A {@code 0x01 + u64 LE} value; absent is -1. The high bit set is a hard error (docs/metadata-keys.md). */
    public static long readVersionedU64le(String key, byte[] v) {
        if (v == null) {
            return -1;
        }
        if (v.length != 9 || v[0] != 1) {
            throw new IllegalStateException("metadata key " + key + " is not a version-1 u64");
        }
        long x = ByteBuffer.wrap(v, 1, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (x < 0) {
            throw new IllegalStateException("metadata key " + key + " has the high bit set");
        }
        return x;
    }

    /** {@code 0x01} + i64 BE (the {@code sync/ident/}, {@code sync/acct/} ratchets). */
    public static byte[] versionedI64be(long v) {
        return ByteBuffer.allocate(9).put((byte) 1).putLong(v).array();
    }

    public static long readVersionedI64be(String key, byte[] v) {
        if (v == null) {
            return Long.MIN_VALUE;
        }
        if (v.length != 9 || v[0] != 1) {
            throw new IllegalStateException("metadata key " + key + " is not a version-1 i64");
        }
        return ByteBuffer.wrap(v, 1, 8).getLong();
    }

    public static byte[] gapKeyBytes(long start) {
        byte[] p = SEQ_GAP_PREFIX.getBytes(StandardCharsets.US_ASCII);
        return ByteBuffer.allocate(p.length + 8).put(p).putLong(start).array();
    }

    public static byte[] gapValue(Vacancy v) {
        return ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN).put((byte) 1).put((byte) v.reason().code())
                .putLong(v.end()).array();
    }

    public static Vacancy parseGap(byte[] key, byte[] value) {
        int p = SEQ_GAP_PREFIX.length();
        if (key.length != p + 8 || value.length != 10 || value[0] != 1) {
            throw new IllegalStateException("malformed seq/gap entry");
        }
        long start = ByteBuffer.wrap(key, p, 8).getLong();
        Vacancy.Reason reason = Vacancy.Reason.ofCode(value[1] & 0xFF);
        long end = ByteBuffer.wrap(value, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (reason == null) {
            throw new IllegalStateException("seq/gap entry at " + start + " has an unknown reason");
        }
        return new Vacancy(start, end, reason);
    }
}
