package jetstream.ingester.backfill;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.firehose.Drop;
import jetstream.atproto.firehose.RepoRecord;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.sync.Repo;
import jetstream.atproto.syntax.Tid;
import jetstream.ingester.IngestMetrics;

/**
 * One {@code getRepo} turned into archive rows (facts §10.4): the CAR is read with every block
 * checked against its CID, the commit must name the requested DID and carry a TID rev, the MST is
 * walked in key order with its structure verified, and each record passes the path gate (drops
 * counted with {@code source=backfill}). A truncated, aborted or corrupt CAR yields a retryable
 * failure and no rows: a partial repo is never archived.
 */
final class RepoFetcher {
    static final String SOURCE = "backfill";

    /** What a fetch produced. */
    sealed interface Result permits Rows, Unavailable, RateLimited, Unreachable, Failed {}

    /** Rows to append (kind 1, or kind 6 then 7s), the head rev, record and CAR byte counts. */
    record Rows(List<jetstream.atproto.firehose.ArchiveRow> rows, String rev, long records, long carBytes)
            implements Result {}

    /** The repo cannot be fetched (deactivated, taken down, not found): terminal. */
    record Unavailable(String error) implements Result {}

    /** 429: park the host this long. */
    record RateLimited(long millis) implements Result {}

    /** The host could not be reached at all. */
    record Unreachable(String error) implements Result {}

    /** A failed attempt; {@code retryable} false when retrying now cannot help (invalid rev). */
    record Failed(String error, boolean retryable) implements Result {}

    private final Xrpc xrpc;
    private final IngestMetrics metrics;

    RepoFetcher(Xrpc xrpc, IngestMetrics metrics) {
        this.xrpc = xrpc;
        this.metrics = metrics;
    }

    /**
     * Downloads and converts {@code did} from {@code base}.
     *
     * @param replacement kind 6 + kind 7 rows (whole-repo replacement) instead of kind 1 rows
     */
    Result fetch(String base, String did, boolean replacement) throws InterruptedException {
        Xrpc.Answer a = xrpc.getRepo(base, did);
        return switch (a.outcome()) {
            case OK -> convert(did, a.body(), replacement);
            case RATE_LIMITED -> new RateLimited(a.retryAfterMillis());
            case HOST_UNREACHABLE -> new Unreachable(a.error());
            case REPO_UNAVAILABLE -> new Unavailable(a.error());
            case NOT_IMPLEMENTED, BAD_RESPONSE -> new Failed(a.error(), true);
        };
    }

    /** Converts a repository CAR already in memory (also the benchmark's entry point). */
    Result convert(String did, byte[] car, boolean replacement) {
        Repo repo;
        List<RepoRecord> records = new ArrayList<>();
        try {
            repo = Repo.read(car);
            if (!did.equals(repo.commit().did())) {
                return new Failed("repo_did_mismatch", true);
            }
            if (!Tid.isValid(repo.commit().rev())) {
                metrics.dropped(SOURCE, Drop.INVALID_REV);
                return new Failed(Drop.INVALID_REV, false);
            }
            repo.walk((key, cid, block) -> records.add(new RepoRecord(new String(key, StandardCharsets.UTF_8),
                    block == null ? null : new ByteSlice(block.buffer(), block.offset(), block.length()))));
        } catch (DecodeException e) {
            return new Failed(e.reason(), true);
        }
        String rev = repo.commit().rev();
        RowConverter.Result r = replacement ? new RowConverter().replacement(did, rev, Instant.now(), records)
                : new RowConverter().backfill(did, rev, records);
        for (Drop d : r.drops()) {
            metrics.dropped(SOURCE, d.reason());
        }
        if (r.eventDropped()) {
            return new Failed(r.drops().get(0).reason(), false);
        }
        long kept = replacement ? r.rows().size() - 1 : r.rows().size();
        return new Rows(r.rows(), rev, kept, car.length);
    }
}
