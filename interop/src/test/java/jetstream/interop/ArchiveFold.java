package jetstream.interop;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import jetstream.atproto.cbor.CborReader;
import jetstream.atproto.cid.Cid;
import jetstream.atproto.firehose.ArchiveRow;
import jetstream.segment.BlockView;
import jetstream.testing.ArchiveRows;

/**
 * The archive on disk read back row by row (sealed and active segments) and folded into repository
 * state the way a consumer reaches current network state (invariant 10): in seq order, kinds 1, 2
 * and 7 set {@code collection/rkey} to the CID recomputed from the payload, kind 3 removes it, kind 6
 * clears the DID (a whole-repo replacement follows as kind 7 rows), kind 5 with status
 * {@code deleted} marks the account gone.
 */
final class ArchiveFold {
    /** One archived row; {@code cid} for record-carrying kinds, {@code status} for kind 5 ("" when active). */
    record Row(long seq, int kind, String did, String collection, String rkey, String cid, String status) {}

    final NavigableMap<Long, Row> rows = new TreeMap<>();
    /** did -> "collection/rkey" -> record CID. */
    final Map<String, TreeMap<String, String>> repos = new HashMap<>();
    /** did -> the status of its last #account row ("" = active). */
    final Map<String, String> accountStatus = new HashMap<>();

    static ArchiveFold read(Path dataDir) throws IOException {
        ArchiveFold f = new ArchiveFold();
        ArchiveRows.forEach(dataDir.resolve("segments"), (block, view, i) -> f.add(view, i));
        for (Row r : f.rows.values()) {
            f.fold(r);
        }
        return f;
    }

    private void add(BlockView v, int i) {
        int kind = v.kindCode(i);
        byte[] payload = v.payload(i);
        String cid = "";
        String status = "";
        if (kind == ArchiveRow.KIND_CREATE || kind == ArchiveRow.KIND_UPDATE || kind == ArchiveRow.KIND_CREATE_RESYNC) {
            cid = Cid.ofDagCbor(payload).toString();
        } else if (kind == ArchiveRow.KIND_ACCOUNT) {
            status = accountStatus(payload);
        }
        Row r = new Row(v.seq(i), kind, v.did(i), v.collection(i), v.rkey(i), cid, status);
        Row prev = rows.put(r.seq(), r);
        if (prev != null && !prev.equals(r)) {
            throw new IllegalStateException("seq " + r.seq() + " archived twice with different rows: " + prev + " / " + r);
        }
    }

    private void fold(Row r) {
        switch (r.kind()) {
            case ArchiveRow.KIND_CREATE, ArchiveRow.KIND_UPDATE, ArchiveRow.KIND_CREATE_RESYNC ->
                    repos.computeIfAbsent(r.did(), d -> new TreeMap<>()).put(r.collection() + "/" + r.rkey(), r.cid());
            case ArchiveRow.KIND_DELETE -> {
                TreeMap<String, String> repo = repos.get(r.did());
                if (repo != null) {
                    repo.remove(r.collection() + "/" + r.rkey());
                }
            }
            case ArchiveRow.KIND_SYNC -> repos.remove(r.did());
            case ArchiveRow.KIND_ACCOUNT -> accountStatus.put(r.did(), r.status());
            default -> {
                // identity rows carry no repository state
            }
        }
    }

    /** The {@code status} of an {@code #account} body when {@code active} is false ("inactive" without one), else "". */
    static String accountStatus(byte[] body) {
        CborReader c = new CborReader(body);
        int n = c.readMapHeader();
        boolean active = true;
        String status = null;
        for (int k = 0; k < n; k++) {
            String key = c.readString();
            if (key.equals("active")) {
                active = c.readBool();
            } else if (key.equals("status") && !c.tryReadNull()) {
                status = c.readString();
            } else {
                c.skip();
            }
        }
        return active ? "" : status == null ? "inactive" : status;
    }
}
