package jetstream.ingester.phase;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import jetstream.feed.LifecyclePhase;
import jetstream.ingester.store.MetaKeys;
import jetstream.ingester.store.MetaStore;

/**
 * The persisted lifecycle phase (docs/metadata-keys.md, docs/architecture.md: Lifecycle):
 * {@code phase} (raw ASCII {@code bootstrap} | {@code merging} | {@code steady_state}; absent = fresh
 * directory; anything else is a hard error)
 * and {@code phase/entered_at} (RFC 3339 nanos UTC), always written in one batch, plus the
 * diagnostic backfill timing keys.
 */
public record PhaseRecord(LifecyclePhase phase, Instant enteredAt) {

    /** The stored phase; {@link LifecyclePhase#NONE} (entered at null) on a fresh directory. */
    public static PhaseRecord load(MetaStore store) {
        byte[] stored = store.get(MetaKeys.PHASE);
        if (stored == null) {
            return new PhaseRecord(LifecyclePhase.NONE, null);
        }
        String value = new String(stored, StandardCharsets.US_ASCII);
        LifecyclePhase p = LifecyclePhase.ofStored(value);
        if (p == null) {
            throw new IllegalStateException("metadata key phase holds an unknown value '" + value
                    + "' (expected bootstrap, merging or steady_state): the metadata store is not ours or is damaged");
        }
        byte[] at = store.get(MetaKeys.PHASE_ENTERED_AT);
        return new PhaseRecord(p, at == null ? null : Instant.parse(new String(at, StandardCharsets.US_ASCII)));
    }

    /** The entries that move the directory into {@code phase} at {@code now}, for one synced batch. */
    public static Map<String, byte[]> entries(LifecyclePhase phase, Instant now) {
        if (phase == LifecyclePhase.NONE) {
            throw new IllegalArgumentException("phase none is never stored");
        }
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put(MetaKeys.PHASE, phase.stored().getBytes(StandardCharsets.US_ASCII));
        m.put(MetaKeys.PHASE_ENTERED_AT, rfc3339(now));
        return m;
    }

    /** RFC 3339 with nanoseconds, UTC (the reference's time encoding of these keys). */
    public static byte[] rfc3339(Instant t) {
        return t.toString().getBytes(StandardCharsets.US_ASCII);
    }

    /** Unix microseconds of {@code enteredAt} for the feed's PHASE frame (0 = unknown). */
    public long enteredAtMicros() {
        return micros(enteredAt);
    }

    public static long micros(Instant t) {
        return t == null ? 0 : t.getEpochSecond() * 1_000_000 + t.getNano() / 1000;
    }
}
