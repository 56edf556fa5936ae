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

    /**
     * Rows to append (kind 1, or kind 6 then 7s), the head rev, record and CAR byte counts;
     * {@code heldBytes} of the in-flight budget stay held until {@link #release} (the rows alias the
     * CAR's buffer, so the bytes are in heap until they are queued to the writer).
     */
    record Rows(List<jetstream.atproto.firehose.ArchiveRow> rows, String rev, long records, long carBytes,
                long heldBytes) implements Result {}

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
    private final CarSpool spool;

    RepoFetcher(Xrpc xrpc, IngestMetrics metrics) {
        this(xrpc, metrics, null);
    }

    /** @param spool the spool {@code xrpc} reads getRepo bodies through, whose budget rows hold; may be null */
    RepoFetcher(Xrpc xrpc, IngestMetrics metrics, CarSpool spool) {
        this.xrpc = xrpc;
        this.metrics = metrics;
        this.spool = spool;
    }

    /**
     * Downloads and converts {@code did} from {@code base}.
     *
     * @param replacement kind 6 + kind 7 rows (whole-repo replacement) instead of kind 1 rows
     */
    Result fetch(String base, String did, boolean replacement) throws InterruptedException {
        Xrpc.Answer a = xrpc.getRepo(base, did);
        return switch (a.outcome()) {
            case OK -> a.spooled() != null ? convertSpooled(did, a.spooled(), replacement) : held(did, a.body(), replacement);
            case RATE_LIMITED -> new RateLimited(a.retryAfterMillis());
            case HOST_UNREACHABLE -> new Unreachable(a.error());
            case REPO_UNAVAILABLE -> new Unavailable(a.error());
            case NOT_IMPLEMENTED, BAD_RESPONSE -> new Failed(a.error(), true);
        };
    }

    /** Gives back the budget a result holds (after its rows were queued, or when they are dropped). */
    void release(Result r) {
        if (spool != null && r instanceof Rows rows) {
            spool.release(rows.heldBytes());
        }
    }

    /** A CAR read into heap: its rows keep its bytes held; any other result frees them now. */
    private Result held(String did, byte[] car, boolean replacement) {
        Result r = convert(did, car, replacement);
        if (spool == null) {
            return r;
        }
        if (r instanceof Rows rows) {
            return new Rows(rows.rows(), rows.rev(), rows.records(), rows.carBytes(), car.length);
        }
        spool.release(car.length);
        return r;
    }

    /** Converts a repository CAR already in memory (also the benchmark's entry point). */
    Result convert(String did, byte[] car, boolean replacement) {
        Repo repo;
        List<RepoRecord> records = new ArrayList<>();
        try {
            repo = Repo.read(car);
            Failed bad = checkCommit(did, repo.commit());
            if (bad != null) {
                return bad;
            }
            repo.walk((key, cid, block) -> records.add(new RepoRecord(new String(key, StandardCharsets.UTF_8),
                    block == null ? null : new ByteSlice(block.buffer(), block.offset(), block.length()))));
        } catch (DecodeException e) {
            return new Failed(e.reason(), true);
        }
        return rows(did, repo.commit().rev(), records, replacement, car.length);
    }

    /** Converts a CAR spooled to a file (larger than the in-heap threshold), then deletes the file. */
    Result convertSpooled(String did, java.nio.file.Path file, boolean replacement) {
        try {
            long size = java.nio.file.Files.size(file);
            List<RepoRecord> records = new ArrayList<>();
            String rev;
            try (SpooledCar car = SpooledCar.open(file)) {
                Failed bad = checkCommit(did, car.commit());
                if (bad != null) {
                    return bad;
                }
                rev = car.commit().rev();
                car.walk((key, cid, block) -> records.add(new RepoRecord(new String(key, StandardCharsets.UTF_8),
                        block == null ? null : new ByteSlice(block, 0, block.length))));
            }
            return rows(did, rev, records, replacement, size);
        } catch (DecodeException e) {
            return new Failed(e.reason(), true);
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
            return new Failed("spool_io: " + e.getMessage(), true);
        } finally {
            CarSpool.delete(file);
        }
    }

    private Failed checkCommit(String did, jetstream.atproto.sync.Commit commit) {
        if (!did.equals(commit.did())) {
            return new Failed("repo_did_mismatch", true);
        }
        if (!Tid.isValid(commit.rev())) {
            metrics.dropped(SOURCE, Drop.INVALID_REV);
            return new Failed(Drop.INVALID_REV, false);
        }
        return null;
    }

    private Result rows(String did, String rev, List<RepoRecord> records, boolean replacement, long carBytes) {
        RowConverter.Result r = replacement ? new RowConverter().replacement(did, rev, Instant.now(), records)
                : new RowConverter().backfill(did, rev, records);
        for (Drop d : r.drops()) {
            metrics.dropped(SOURCE, d.reason());
        }
        if (r.eventDropped()) {
            return new Failed(r.drops().get(0).reason(), false);
        }
        long kept = replacement ? r.rows().size() - 1 : r.rows().size();
        return new Rows(r.rows(), rev, kept, carBytes, 0);
    }
}
