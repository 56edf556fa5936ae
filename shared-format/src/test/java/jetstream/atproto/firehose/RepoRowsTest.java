package jetstream.atproto.firehose;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.car.CarBlock;
import jetstream.atproto.car.CarReader;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Rows from whole repositories: backfill, verifier resync records, whole-repo replacement. */
@Tag("unit")
class RepoRowsTest {
    private static final String DID = "did:plc:53iucmf5ldftgqyf2ac7hmhd";
    private static final String REV = "3migo7fijwi2k";
    private final RowConverter converter = new RowConverter();

    /** The records of repo.car as its pinned listing names them, each with its block from the CAR. */
    private static List<RepoRecord> repoRecords() {
        byte[] car = Vectors.bytes("jetstream-corpus/repo.car");
        Map<Cid, CarBlock> blocks = CarReader.readAll(car, 0, car.length);
        List<RepoRecord> records = new ArrayList<>();
        for (String line : Vectors.lines("jetstream-corpus/car_expected_records.tsv").toList()) {
            String[] parts = line.split("\t");
            CarBlock b = blocks.get(Cid.parse(parts[1]));
            records.add(new RepoRecord(parts[0], new ByteSlice(b.buffer(), b.offset(), b.length())));
        }
        return records;
    }

    @Test
    void backfillOfRepoCarGivesOneCreateRowPerRecordWithTheHeadRev() {
        List<String> commit = Vectors.lines("jetstream-corpus/car_expected_commit.txt").toList();
        assertTrue(commit.contains("DID: " + DID) && commit.contains("Revision: " + REV), "pinned commit " + commit);
        List<RepoRecord> records = repoRecords();
        assertEquals(23, records.size());
        RowConverter.Result r = converter.backfill(DID, REV, records);
        assertEquals(List.of(), r.drops());
        assertEquals(23, r.rows().size());
        for (int i = 0; i < records.size(); i++) {
            ArchiveRow row = r.rows().get(i);
            assertEquals(ArchiveRow.KIND_CREATE, row.kind());
            assertEquals(DID, row.did());
            assertEquals(REV, row.rev());
            assertEquals(records.get(i).key(), row.collection() + "/" + row.rkey());
            assertEquals(records.get(i).block(), row.payload());
        }
        assertEquals("app.bsky.actor.profile", r.rows().get(0).collection());
        assertEquals("self", r.rows().get(0).rkey());
    }

    @Test
    void backfillFailsTheRepoOnABadRevAndDropsBadRecordsOnly() {
        assertTrue(converter.backfill(DID, "", repoRecords()).eventDropped());
        assertEquals(Drop.INVALID_REV, converter.backfill(DID, "", repoRecords()).drops().get(0).reason());

        ByteSlice block = repoRecords().get(0).block();
        RowConverter.Result r = converter.backfill(DID, REV, List.of(
                new RepoRecord("$identity/self", block),
                new RepoRecord("app.bsky.actor.profile/self/extra", block),
                new RepoRecord("app.bsky.actor.profile/self", null),
                new RepoRecord("app.bsky.actor.profile/" + "r".repeat(300), block),
                new RepoRecord("app.bsky.actor.profile/self", block)));
        assertEquals(List.of(Drop.INVALID_COLLECTION, Drop.INVALID_RKEY, Drop.MISSING_BLOCK, Drop.FIELD_TOO_LONG),
                r.drops().stream().map(Drop::reason).toList());
        assertEquals(1, r.rows().size());
    }

    @Test
    void resyncRecordsAreKindSevenAndABadRevDropsEachRecord() {
        List<RepoRecord> records = repoRecords().subList(0, 3);
        RowConverter.Result r = converter.resyncRecords(DID, REV, records);
        assertEquals(3, r.rows().size());
        r.rows().forEach(row -> assertEquals(ArchiveRow.KIND_CREATE_RESYNC, row.kind()));
        RowConverter.Result bad = converter.resyncRecords(DID, "nope", records);
        assertEquals(List.of(), bad.rows());
        assertEquals(3, bad.drops().size());
        bad.drops().forEach(d -> assertEquals(Drop.INVALID_REV, d.reason()));
        assertTrue(!bad.eventDropped());
    }

    @Test
    void replacementLeadsWithASyntheticSyncRow() {
        Instant now = Instant.parse("2026-07-04T14:38:07.877120Z");
        RowConverter.Result r = converter.replacement(DID, REV, now, repoRecords());
        assertEquals(24, r.rows().size());
        ArchiveRow sync = r.rows().get(0);
        assertEquals(ArchiveRow.KIND_SYNC, sync.kind());
        assertEquals(REV, sync.rev());
        Map<String, Object> body = DagCbor.decodeMap(sync.payload().buffer(), sync.payload().offset(), sync.payload().length());
        assertEquals(List.of("did", "rev", "seq", "time", "blocks"), new ArrayList<>(body.keySet()));
        assertEquals(DID, body.get("did"));
        assertEquals(0L, body.get("seq"));
        assertEquals("2026-07-04T14:38:07.87712Z", body.get("time"));
        assertArrayEquals(new byte[0], (byte[]) body.get("blocks"));
        for (ArchiveRow row : r.rows().subList(1, 24)) {
            assertEquals(ArchiveRow.KIND_CREATE_RESYNC, row.kind());
        }
        assertTrue(converter.replacement("did:x", REV, now, repoRecords()).eventDropped());
    }

    @Test
    void syntheticSyncTimeTrimsTrailingZerosLikeGo() {
        Map<String, String> cases = new LinkedHashMap<>();
        cases.put("2026-07-04T14:38:07Z", "2026-07-04T14:38:07Z");
        cases.put("2026-07-04T14:38:07.100Z", "2026-07-04T14:38:07.1Z");
        cases.put("2026-07-04T14:38:07.123456789Z", "2026-07-04T14:38:07.123456789Z");
        cases.forEach((in, want) -> {
            byte[] p = RowConverter.syntheticSyncPayload(DID, REV, Instant.parse(in));
            assertEquals(want, DagCbor.decodeMap(p, 0, p.length).get("time"));
        });
    }
}
