package jetstream.atproto.firehose;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cbor.DataModel;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.syntax.Did;
import jetstream.atproto.syntax.Nsid;
import jetstream.atproto.syntax.RecordKey;
import jetstream.atproto.syntax.Tid;

/**
 * Turns upstream input into archive rows (docs/segment-format.md) and applies the ingest validation gate
 * (docs/lifecycle.md: Live path, Backfill; docs/segment-format.md: Block body):
 *
 * <ul>
 *   <li>a DID that is not DID syntax, or a {@code #commit}/{@code #sync}/repo rev that is not a TID,
 *       drops the whole event (or fails the whole repo): every row would share it;
 *   <li>a path whose collection is not an NSID ({@code $}-prefixed names included) or whose record
 *       key is not a record key drops that record only;
 *   <li>a create/update/resync record whose block is missing, or is not exactly one DAG-CBOR map of
 *       the atproto data model ({@code invalid_data_model}: floats, CIDs not SHA-256, trailing
 *       bytes, a top-level non-map), drops that record;
 *   <li>a record whose collection or key does not fit its segment column drops that record
 *       ({@code field_too_long}).
 * </ul>
 *
 * <p>The DID gate is ours: the reference leaves repo DIDs unchecked, but a DID that is not DID syntax
 * could never be asked for by a client filter and only pollutes blooms.
 *
 * <p>Malformed input that is not a validation matter (an unknown op action, a broken CAR diff)
 * throws {@link DecodeException}: the caller counts it as a decode error and skips the event.
 * Payloads alias their input: identity/account/sync payloads are the body bytes as received (the
 * strict decoder only accepts canonical DAG-CBOR, so they equal its canonical re-encoding), record
 * payloads are the block bytes.
 */
public final class RowConverter {
    /** Go's RFC 3339 with nanoseconds: fraction trimmed of trailing zeros, absent when zero. */
    private static final DateTimeFormatter RFC3339_NANO = new DateTimeFormatterBuilder()
            .appendPattern("uuuu-MM-dd'T'HH:mm:ss")
            .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
            .appendLiteral('Z')
            .toFormatter()
            .withZone(ZoneOffset.UTC);

    /** The outcome for one input: rows to append, in order, and what was dropped. */
    public record Result(List<ArchiveRow> rows, List<Drop> drops) {
        static final Result NOTHING = new Result(List.of(), List.of());

        /** True when the whole event (or repo) was refused; its single drop says why. */
        public boolean eventDropped() {
            return drops.size() == 1 && drops.get(0).wholeEvent();
        }
    }

    /** Rows of one firehose message; {@code #info}, error and unknown frames give none. */
    public Result convert(FirehoseMessage message) {
        return convert(message, null);
    }

    /**
     * {@link #convert(FirehoseMessage)} with a {@code #commit}'s CAR blocks already read and checked
     * against their CIDs (a successful verification's {@code blocks}), so the CAR is not parsed and
     * hashed again; null reads the CAR here.
     */
    public Result convert(FirehoseMessage message, Map<Cid, CarBlock> verifiedBlocks) {
        if (message instanceof FirehoseMessage.Commit c) {
            return commit(c, verifiedBlocks);
        }
        if (message instanceof FirehoseMessage.Identity e) {
            return single(ArchiveRow.KIND_IDENTITY, e.did(), "", e.body());
        }
        if (message instanceof FirehoseMessage.Account e) {
            return single(ArchiveRow.KIND_ACCOUNT, e.did(), "", e.body());
        }
        if (message instanceof FirehoseMessage.Sync e) {
            if (!Tid.isValid(e.rev())) {
                return dropEvent(Drop.INVALID_REV, "sync did=" + e.did());
            }
            return single(ArchiveRow.KIND_SYNC, e.did(), e.rev(), e.body());
        }
        return Result.NOTHING;
    }

    /**
     * Backfill of a whole repository ({@code getRepo}): one kind 1 row per record, all carrying the
     * head commit's rev. An invalid DID or rev fails the repo.
     */
    public Result backfill(String did, String commitRev, List<RepoRecord> records) {
        Result refused = refuse(did, commitRev, "repo");
        if (refused != null) {
            return refused;
        }
        Rows out = new Rows(records.size());
        for (RepoRecord r : records) {
            out.record(ArchiveRow.KIND_CREATE, did, commitRev, r.key(), r.block());
        }
        return out.result();
    }

    /**
     * The kind 7 rows a verifier resync yields after a {@code #sync} (whose own kind 6 row comes from
     * {@link #convert}, first). The records carry the resync's rev: an invalid one drops each record
     * ({@code invalid_rev}), not the sync row before them.
     */
    public Result resyncRecords(String did, String rev, List<RepoRecord> records) {
        if (!Did.isValid(did)) {
            return dropEvent(Drop.INVALID_DID, "resync");
        }
        Rows out = new Rows(records.size());
        for (RepoRecord r : records) {
            if (!Tid.isValid(rev)) {
                out.drop(new Drop(Drop.INVALID_REV, false, "resync did=" + did));
            } else {
                out.record(ArchiveRow.KIND_CREATE_RESYNC, did, rev, r.key(), r.block());
            }
        }
        return out.result();
    }

    /**
     * A whole-repository replacement (failed or pending repo retry, asynchronous resync): a synthetic
     * kind 6 row with {@link #syntheticSyncPayload}, then one kind 7 row per surviving record. Every
     * record is validated before anything is emitted; an invalid DID or rev refuses it all.
     */
    public Result replacement(String did, String rev, Instant now, List<RepoRecord> records) {
        Result refused = refuse(did, rev, "replacement");
        if (refused != null) {
            return refused;
        }
        Rows out = new Rows(records.size() + 1);
        byte[] sync = syntheticSyncPayload(did, rev, now);
        out.rows.add(new ArchiveRow(ArchiveRow.KIND_SYNC, did, "", "", rev, new ByteSlice(sync, 0, sync.length)));
        for (RepoRecord r : records) {
            out.record(ArchiveRow.KIND_CREATE_RESYNC, did, rev, r.key(), r.block());
        }
        return out.result();
    }

    /**
     * The payload of a synthetic {@code #sync} row: canonical DAG-CBOR of
     * {@code {did, rev, seq: 0, time: <RFC 3339 with trimmed nanoseconds>, blocks: <empty>}}.
     */
    public static byte[] syntheticSyncPayload(String did, String rev, Instant time) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("did", did);
        body.put("rev", rev);
        body.put("seq", 0L);
        body.put("time", RFC3339_NANO.format(time));
        body.put("blocks", new byte[0]);
        return DagCbor.encode(body);
    }

    private static Result single(int kind, String did, String rev, ByteSlice payload) {
        if (!Did.isValid(did)) {
            return dropEvent(Drop.INVALID_DID, "kind " + kind);
        }
        return new Result(List.of(new ArchiveRow(kind, did, "", "", rev, payload)), List.of());
    }

    private static Result commit(FirehoseMessage.Commit c, Map<Cid, CarBlock> verifiedBlocks) {
        Result refused = refuse(c.repo(), c.rev(), "commit");
        if (refused != null) {
            return refused;
        }
        Rows out = new Rows(c.ops().size());
        Map<Cid, CarBlock> blocks = verifiedBlocks;
        for (FirehoseMessage.RepoOp op : c.ops()) {
            int kind = switch (op.action()) {
                case "create" -> ArchiveRow.KIND_CREATE;
                case "update" -> ArchiveRow.KIND_UPDATE;
                case "delete" -> ArchiveRow.KIND_DELETE;
                default -> throw new DecodeException("firehose_op_action", "unknown commit op action in " + c.repo());
            };
            ByteSlice block = ByteSlice.EMPTY;
            if (kind != ArchiveRow.KIND_DELETE && pathValid(op.path())) {
                if (blocks == null) {
                    ByteSlice car = c.blocks();
                    blocks = car.length() == 0 ? Map.of() : CarReader.readAll(car.buffer(), car.offset(), car.length());
                }
                CarBlock b = op.cid() == null ? null : blocks.get(op.cid());
                block = b == null ? null : new ByteSlice(b.buffer(), b.offset(), b.length());
            }
            out.record(kind, c.repo(), c.rev(), op.path(), block);
        }
        return out.result();
    }

    private static boolean pathValid(String path) {
        int slash = path.indexOf('/');
        return slash > 0 && Nsid.isValid(path, 0, slash) && RecordKey.isValid(path, slash + 1, path.length());
    }

    /** The whole-input refusal for a bad DID or rev, or null when both are valid. */
    private static Result refuse(String did, String rev, String what) {
        if (!Did.isValid(did)) {
            return dropEvent(Drop.INVALID_DID, what + " rev=" + rev);
        }
        if (!Tid.isValid(rev)) {
            return dropEvent(Drop.INVALID_REV, what + " did=" + did);
        }
        return null;
    }

    private static Result dropEvent(String reason, String detail) {
        return new Result(List.of(), List.of(new Drop(reason, true, detail)));
    }

    /** Accumulates the rows and drops of one input. */
    private static final class Rows {
        final List<ArchiveRow> rows;
        List<Drop> drops;

        Rows(int expected) {
            rows = new ArrayList<>(expected);
        }

        void drop(Drop d) {
            if (drops == null) {
                drops = new ArrayList<>(2);
            }
            drops.add(d);
        }

        /**
         * Gates one record at {@code path} ({@code collection/rkey}): path syntax, then the block
         * (required unless {@code kind} is a delete; null means missing), then column widths.
         */
        void record(int kind, String did, String rev, String path, ByteSlice block) {
            int slash = path.indexOf('/');
            int collectionEnd = slash < 0 ? path.length() : slash;
            if (!Nsid.isValid(path, 0, collectionEnd)) {
                drop(new Drop(Drop.INVALID_COLLECTION, false, "did=" + did));
                return;
            }
            if (slash < 0 || !RecordKey.isValid(path, slash + 1, path.length())) {
                drop(new Drop(Drop.INVALID_RKEY, false, "did=" + did));
                return;
            }
            if (block == null) {
                drop(new Drop(Drop.MISSING_BLOCK, false, "did=" + did + " path=" + path));
                return;
            }
            if (kind != ArchiveRow.KIND_DELETE && !DataModel.isRecord(block.buffer(), block.offset(), block.length())) {
                drop(new Drop(Drop.INVALID_DATA_MODEL, false, "did=" + did + " path=" + path));
                return;
            }
            // Legal but unrepresentable: NSIDs reach 317 bytes and record keys 512, the columns hold 255.
            if (slash > ArchiveRow.MAX_COLLECTION_BYTES || path.length() - slash - 1 > ArchiveRow.MAX_RKEY_BYTES) {
                drop(new Drop(Drop.FIELD_TOO_LONG, false, "did=" + did + " path of " + path.length() + " bytes"));
                return;
            }
            rows.add(new ArchiveRow(kind, did, path.substring(0, slash), path.substring(slash + 1), rev,
                    kind == ArchiveRow.KIND_DELETE ? ByteSlice.EMPTY : block));
        }

        Result result() {
            return new Result(rows, drops == null ? List.of() : Collections.unmodifiableList(drops));
        }
    }
}
