package jetstream.atproto.firehose;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.syntax.Did;
import jetstream.atproto.syntax.Nsid;
import jetstream.atproto.syntax.RecordKey;
import jetstream.atproto.syntax.Tid;

/**
 * Turns decoded firehose messages into archive rows (facts §2.4) and applies the ingest validation
 * gate (spec §4.4, facts §10.3, §2.6):
 *
 * <ul>
 *   <li>a DID that is not DID syntax, or a {@code #commit}/{@code #sync} rev that is not a TID,
 *       drops the whole event: every row would share it;
 *   <li>an op path whose collection is not an NSID ({@code $}-prefixed names included) or whose
 *       record key is not a record key drops that op only;
 *   <li>a create/update whose record block is absent from the CAR diff drops that op;
 *   <li>a row whose field does not fit its segment column drops that row ({@code field_too_long}).
 * </ul>
 *
 * <p>The DID gate is ours: the reference leaves repo DIDs unchecked, but a DID that is not DID syntax
 * could never be asked for by a client filter and only pollutes blooms.
 *
 * <p>Malformed input that is not a validation matter (an unknown op action, a broken CAR diff)
 * throws {@link DecodeException}: the caller counts it as a decode error and skips the event.
 * Payloads alias the frame: identity/account/sync payloads are the body bytes as received (the
 * strict decoder only accepts canonical DAG-CBOR, so they equal its canonical re-encoding), record
 * payloads are the block bytes inside the CAR diff.
 */
public final class RowConverter {

    /** The outcome for one message: rows to append, in order, and what was dropped. */
    public record Result(List<ArchiveRow> rows, List<Drop> drops) {
        static final Result NOTHING = new Result(List.of(), List.of());

        /** True when the whole event was refused (its single drop says why). */
        public boolean eventDropped() {
            return drops.size() == 1 && drops.get(0).wholeEvent();
        }
    }

    public Result convert(FirehoseMessage message) {
        if (message instanceof FirehoseMessage.Commit c) {
            return commit(c);
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

    private static Result single(int kind, String did, String rev, ByteSlice payload) {
        if (!Did.isValid(did)) {
            return dropEvent(Drop.INVALID_DID, "kind " + kind);
        }
        return new Result(List.of(new ArchiveRow(kind, did, "", "", rev, payload)), List.of());
    }

    private static Result commit(FirehoseMessage.Commit c) {
        if (!Did.isValid(c.repo())) {
            return dropEvent(Drop.INVALID_DID, "commit rev=" + c.rev());
        }
        if (!Tid.isValid(c.rev())) {
            return dropEvent(Drop.INVALID_REV, "commit did=" + c.repo());
        }
        List<ArchiveRow> rows = new ArrayList<>(c.ops().size());
        List<Drop> drops = null;
        Map<Cid, CarBlock> blocks = null;
        for (FirehoseMessage.RepoOp op : c.ops()) {
            int kind = switch (op.action()) {
                case "create" -> ArchiveRow.KIND_CREATE;
                case "update" -> ArchiveRow.KIND_UPDATE;
                case "delete" -> ArchiveRow.KIND_DELETE;
                default -> throw new DecodeException("firehose_op_action", "unknown commit op action in " + c.repo());
            };
            String path = op.path();
            int slash = path.indexOf('/');
            int collectionEnd = slash < 0 ? path.length() : slash;
            String reason = null;
            if (!Nsid.isValid(path, 0, collectionEnd)) {
                reason = Drop.INVALID_COLLECTION;
            } else if (slash < 0 || !RecordKey.isValid(path, slash + 1, path.length())) {
                reason = Drop.INVALID_RKEY;
            }
            if (reason != null) {
                drops = add(drops, new Drop(reason, false, "did=" + c.repo()));
                continue;
            }
            ByteSlice payload = ByteSlice.EMPTY;
            if (kind != ArchiveRow.KIND_DELETE) {
                if (blocks == null) {
                    ByteSlice car = c.blocks();
                    blocks = car.length() == 0 ? Map.of() : CarReader.readAll(car.buffer(), car.offset(), car.length());
                }
                CarBlock block = op.cid() == null ? null : blocks.get(op.cid());
                if (block == null) {
                    drops = add(drops, new Drop(Drop.MISSING_BLOCK, false, "did=" + c.repo() + " path=" + path));
                    continue;
                }
                payload = new ByteSlice(block.buffer(), block.offset(), block.length());
            }
            // Legal but unrepresentable: NSIDs reach 317 bytes and record keys 512, the columns hold 255.
            if (collectionEnd > ArchiveRow.MAX_COLLECTION_BYTES || path.length() - slash - 1 > ArchiveRow.MAX_RKEY_BYTES) {
                drops = add(drops, new Drop(Drop.FIELD_TOO_LONG, false, "did=" + c.repo() + " path of " + path.length() + " bytes"));
                continue;
            }
            rows.add(new ArchiveRow(kind, c.repo(), path.substring(0, slash), path.substring(slash + 1), c.rev(), payload));
        }
        return new Result(rows, drops == null ? List.of() : Collections.unmodifiableList(drops));
    }

    private static Result dropEvent(String reason, String detail) {
        return new Result(List.of(), List.of(new Drop(reason, true, detail)));
    }

    private static List<Drop> add(List<Drop> drops, Drop drop) {
        List<Drop> list = drops == null ? new ArrayList<>(2) : drops;
        list.add(drop);
        return list;
    }
}
