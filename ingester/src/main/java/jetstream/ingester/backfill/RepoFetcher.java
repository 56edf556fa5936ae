package jetstream.ingester.backfill;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.crypto.PublicKey;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.atproto.firehose.ByteSlice;
import jetstream.atproto.firehose.Drop;
import jetstream.atproto.firehose.RepoRecord;
import jetstream.atproto.firehose.RowConverter;
import jetstream.atproto.sync.Commit;
import jetstream.atproto.sync.Repo;
import jetstream.atproto.syntax.Tid;
import jetstream.ingester.IngestMetrics;
import jetstream.ingester.net.Outbound;

/**
 * One {@code getRepo} turned into archive rows (docs/lifecycle.md: Backfill), the one path for every repository
 * download (backfill, failed-repo retries, live resyncs): the CAR is read with every block checked
 * against its CID, the commit must name the requested DID, carry a TID rev and, when a key is
 * given, be signed with it; the MST is walked in key order with its structure verified, and each
 * record passes the gate (drops counted under the fetcher's {@code source}). A truncated, aborted
 * or corrupt CAR yields a retryable failure and no rows: a partial repo is never archived. A CAR
 * over the spool's in-heap threshold arrives as a file and is parsed from there.
 */
public final class RepoFetcher {
    static final String SOURCE = "backfill";

    /** What a fetch produced. */
    public sealed interface Result permits Rows, Unavailable, RateLimited, Unreachable, Failed {}

    /**
     * Rows to append (kind 1, or kind 6 then 7s), the head rev and tree, record and CAR byte counts;
     * {@code heldBytes} of the in-flight budget stay held until {@link #release} (the rows alias the
     * CAR's buffer, so the bytes are in heap until they are queued to the writer).
     */
    public record Rows(List<ArchiveRow> rows, String rev, Cid data, long records, long carBytes, long heldBytes)
            implements Result {}

    /** The repo cannot be fetched (deactivated, taken down, not found): terminal. */
    public record Unavailable(String error) implements Result {}

    /** 429: park the host this long. */
    public record RateLimited(long millis) implements Result {}

    /** The host could not be reached at all. */
    public record Unreachable(String error) implements Result {}

    /** A failed attempt; {@code retryable} false when retrying now cannot help (invalid rev, bad signature). */
    public record Failed(String error, boolean retryable) implements Result {}

    private final SyncCalls xrpc;
    private final IngestMetrics metrics;
    private final CarSpool spool;
    private final String source;

    RepoFetcher(SyncCalls xrpc, IngestMetrics metrics) {
        this(xrpc, metrics, null);
    }

    /** @param spool the spool {@code xrpc} reads getRepo bodies through, whose budget rows hold; may be null */
    RepoFetcher(SyncCalls xrpc, IngestMetrics metrics, CarSpool spool) {
        this(xrpc, metrics, spool, SOURCE);
    }

    private RepoFetcher(SyncCalls xrpc, IngestMetrics metrics, CarSpool spool, String source) {
        this.xrpc = xrpc;
        this.metrics = metrics;
        this.spool = spool;
        this.source = source;
    }

    /**
     * The fetcher of live resyncs: the PDS comes from a DID document, so every redirect target must
     * be a public host ({@link Outbound#publicHost}); drops count under {@code source=live}.
     */
    public static RepoFetcher live(HttpClient http, HostnamePolicy policy, Duration timeout, IngestMetrics metrics) {
        return live(http, policy, timeout, metrics, null, Outbound.DEFAULT_MAX_CAR_BYTES);
    }

    /** {@link #live} whose requests go through {@code transport} (null: {@code http}), CARs capped at {@code maxCarBytes}. */
    public static RepoFetcher live(HttpClient http, HostnamePolicy policy, Duration timeout, IngestMetrics metrics,
                                   Outbound.Transport transport, long maxCarBytes) {
        return new RepoFetcher(new SyncCalls(http, timeout, timeout, target -> Outbound.publicHost(policy, target.getHost()),
                null, transport, maxCarBytes), metrics, null, "live");
    }

    /**
     * Downloads and converts {@code did} from {@code base}.
     *
     * @param replacement kind 6 + kind 7 rows (whole-repo replacement) instead of kind 1 rows
     */
    Result fetch(String base, String did, boolean replacement) throws InterruptedException {
        return fetch(base, did, replacement, null);
    }

    /** {@link #fetch(String, String, boolean)} whose commit must also be signed with {@code key} (when not null). */
    public Result fetch(String base, String did, boolean replacement, PublicKey key) throws InterruptedException {
        SyncCalls.Answer a = xrpc.getRepo(base, did);
        return switch (a.outcome()) {
            case OK -> a.spooled() != null ? heldSpooled(did, a.spooled(), replacement, key)
                    : held(did, a.body(), replacement, key);
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

    /**
     * A CAR read into heap: its rows keep its heap cost held; any other result, or a defect thrown while
     * converting it, frees it now.
     */
    private Result held(String did, byte[] car, boolean replacement, PublicKey key) {
        long cost = CarSpool.heapCost(car.length);
        Result r = null;
        try {
            r = convert(did, car, replacement, key);
        } finally {
            if (spool != null && !(r instanceof Rows)) {
                spool.release(cost);
            }
        }
        return spool != null && r instanceof Rows rows
                ? new Rows(rows.rows(), rows.rev(), rows.data(), rows.records(), rows.carBytes(), cost) : r;
    }

    /**
     * A spooled CAR: its rows are copied into heap, so before the walk they take the CAR's size
     * (an upper bound of their record bytes) from the in-flight budget, waiting for room: the
     * body is already on disk, so the wait holds nothing another download needs. The rows keep
     * the bytes held until queued; a repo larger than the whole budget goes alone. (Only a fetcher
     * with a spool receives spooled bodies.)
     */
    private Result heldSpooled(String did, Path file, boolean replacement, PublicKey key) throws InterruptedException {
        long size;
        try {
            size = Files.size(file);
        } catch (IOException e) {
            CarSpool.delete(file);
            return new Failed("spool_io: " + e.getMessage(), true);
        }
        spool.hold(size);
        Result r = null;
        try {
            r = convertSpooled(did, file, replacement, key);
        } finally {
            if (!(r instanceof Rows)) {
                spool.release(size);
            }
        }
        return r instanceof Rows rows
                ? new Rows(rows.rows(), rows.rev(), rows.data(), rows.records(), rows.carBytes(), size) : r;
    }

    /** Converts a repository CAR already in memory (also the benchmark's entry point). */
    Result convert(String did, byte[] car, boolean replacement) {
        return convert(did, car, replacement, null);
    }

    private Result convert(String did, byte[] car, boolean replacement, PublicKey signer) {
        Repo repo;
        List<RepoRecord> records = new ArrayList<>();
        try {
            repo = Repo.read(car);
            Failed bad = checkCommit(did, repo.commit(), signer);
            if (bad != null) {
                return bad;
            }
            repo.walk((key, cid, block) -> records.add(new RepoRecord(new String(key, StandardCharsets.UTF_8),
                    block == null ? null : new ByteSlice(block.buffer(), block.offset(), block.length()))));
        } catch (DecodeException e) {
            return new Failed(e.reason(), true);
        }
        return rows(did, repo.commit(), records, replacement, car.length);
    }

    /** Converts a CAR spooled to a file (larger than the in-heap threshold), then deletes the file. */
    private Result convertSpooled(String did, Path file, boolean replacement, PublicKey signer) {
        try {
            long size = Files.size(file);
            List<RepoRecord> records = new ArrayList<>();
            Commit commit;
            try (SpooledCar car = SpooledCar.open(file)) {
                commit = car.commit();
                Failed bad = checkCommit(did, commit, signer);
                if (bad != null) {
                    return bad;
                }
                car.walk((key, cid, block) -> records.add(new RepoRecord(new String(key, StandardCharsets.UTF_8),
                        block == null ? null : new ByteSlice(block, 0, block.length))));
            }
            return rows(did, commit, records, replacement, size);
        } catch (DecodeException e) {
            return new Failed(e.reason(), true);
        } catch (IOException | UncheckedIOException e) {
            return new Failed("spool_io: " + e.getMessage(), true);
        } finally {
            CarSpool.delete(file);
        }
    }

    private Failed checkCommit(String did, Commit commit, PublicKey signer) {
        if (!did.equals(commit.did())) {
            return new Failed("repo_did_mismatch", true);
        }
        if (!Tid.isValid(commit.rev())) {
            metrics.dropped(source, Drop.INVALID_REV);
            return new Failed(Drop.INVALID_REV, false);
        }
        if (signer != null && !commit.verifySignature(signer)) {
            return new Failed("bad_signature", false);
        }
        return null;
    }

    private Result rows(String did, Commit commit, List<RepoRecord> records, boolean replacement, long carBytes) {
        String rev = commit.rev();
        RowConverter.Result r = replacement ? new RowConverter().replacement(did, rev, Instant.now(), records)
                : new RowConverter().backfill(did, rev, records);
        for (Drop d : r.drops()) {
            metrics.dropped(source, d.reason());
        }
        if (r.eventDropped()) {
            return new Failed(r.drops().get(0).reason(), false);
        }
        long kept = replacement ? r.rows().size() - 1 : r.rows().size();
        return new Rows(r.rows(), rev, commit.data(), kept, carBytes, 0);
    }
}
