package jetstream.atproto.firehose;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.car.CarWriter;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The ingest validation gate and frame-level failures, on frames built here. */
@Tag("unit")
class ConversionGateTest {
    private static final String DID = "did:plc:abcdefghijklmnopqrstuvwx";
    private static final String REV = "3mptbypluud2a";
    private static final byte[] RECORD = DagCbor.encode(Map.of("$type", "app.bsky.feed.like", "createdAt", "2026-07-04T14:38:08.999Z"));
    private static final Cid RECORD_CID = Cid.ofDagCbor(RECORD);

    private final FrameDecoder decoder = new FrameDecoder();
    private final RowConverter converter = new RowConverter();

    private static byte[] frame(Map<String, Object> header, Map<String, Object> body) {
        byte[] h = DagCbor.encode(header);
        byte[] b = DagCbor.encode(body);
        byte[] f = Arrays.copyOf(h, h.length + b.length);
        System.arraycopy(b, 0, f, h.length, b.length);
        return f;
    }

    private static Map<String, Object> message(String type) {
        return Map.of("op", 1L, "t", type);
    }

    private static Map<String, Object> op(String action, String path, Cid cid) {
        Map<String, Object> op = new LinkedHashMap<>();
        op.put("action", action);
        op.put("path", path);
        op.put("cid", cid);
        return op;
    }

    private static Map<String, Object> commit(String repo, String rev, List<Map<String, Object>> ops, boolean withBlock) {
        Map<Cid, byte[]> blocks = new LinkedHashMap<>();
        if (withBlock) {
            blocks.put(RECORD_CID, RECORD);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("seq", 42L);
        body.put("repo", repo);
        body.put("rev", rev);
        body.put("since", null);
        body.put("commit", RECORD_CID);
        body.put("blocks", CarWriter.toBytes(List.of(RECORD_CID), blocks));
        body.put("ops", new ArrayList<>(ops));
        body.put("blobs", List.of());
        body.put("rebase", false);
        body.put("tooBig", false);
        body.put("time", "2026-07-04T14:38:09.000Z");
        return body;
    }

    private RowConverter.Result convert(byte[] frame) {
        return converter.convert(decoder.decode(frame));
    }

    @Test
    void validCommitYieldsOneRowPerOpWithRecordBytesFromTheCar() {
        RowConverter.Result r = convert(frame(message("#commit"), commit(DID, REV, List.of(
                op("create", "app.bsky.feed.like/3mptbyplj5d2a", RECORD_CID),
                op("update", "app.bsky.feed.like/self", RECORD_CID),
                op("delete", "app.bsky.feed.like/3mptbyplj5d2b", null)), true)));
        assertEquals(List.of(), r.drops());
        assertEquals(3, r.rows().size());
        ArchiveRow create = r.rows().get(0);
        assertEquals(ArchiveRow.KIND_CREATE, create.kind());
        assertEquals(DID, create.did());
        assertEquals("app.bsky.feed.like", create.collection());
        assertEquals("3mptbyplj5d2a", create.rkey());
        assertEquals(REV, create.rev());
        assertArrayEquals(RECORD, create.payload().toByteArray());
        assertEquals(ArchiveRow.KIND_UPDATE, r.rows().get(1).kind());
        assertEquals(ArchiveRow.KIND_DELETE, r.rows().get(2).kind());
        assertEquals(0, r.rows().get(2).payload().length());
    }

    @Test
    void invalidRevDropsTheWholeCommit() {
        RowConverter.Result r = convert(frame(message("#commit"), commit(DID, "not-a-tid", List.of(
                op("create", "app.bsky.feed.like/3mptbyplj5d2a", RECORD_CID)), true)));
        assertTrue(r.eventDropped());
        assertEquals(Drop.INVALID_REV, r.drops().get(0).reason());
        assertEquals(List.of(), r.rows());
    }

    @Test
    void invalidDidDropsTheWholeEventWithABoundedDetail() {
        RowConverter.Result r = convert(frame(message("#commit"), commit("DID:plc:x", "r".repeat(100_000), List.of(), true)));
        assertTrue(r.eventDropped());
        assertEquals(Drop.INVALID_DID, r.drops().get(0).reason());
        assertTrue(r.drops().get(0).detail().length() <= Drop.MAX_DETAIL + 3, "detail quotes hostile input unbounded");
    }

    @Test
    void badPathsDropOnlyTheirOp() {
        String longKey = "k".repeat(256);
        RowConverter.Result r = convert(frame(message("#commit"), commit(DID, REV, List.of(
                op("create", "$account/3mptbyplj5d2a", RECORD_CID),
                op("create", "app.bsky.feed.like/bad key", RECORD_CID),
                op("create", "app.bsky.feed.like", RECORD_CID),
                op("create", "app.bsky.feed.like/" + longKey, RECORD_CID),
                op("create", "app.bsky.feed.like/3mptbyplj5d2c", Cid.ofDagCbor(new byte[] {(byte) 0xa0})),
                op("create", "app.bsky.feed.like/3mptbyplj5d2d", RECORD_CID)), true)));
        assertFalse(r.eventDropped());
        assertEquals(List.of(Drop.INVALID_COLLECTION, Drop.INVALID_RKEY, Drop.INVALID_RKEY, Drop.FIELD_TOO_LONG,
                Drop.MISSING_BLOCK), r.drops().stream().map(Drop::reason).toList());
        assertEquals(1, r.rows().size());
        assertEquals("3mptbyplj5d2d", r.rows().get(0).rkey());
    }

    @Test
    void recordsOutsideTheDataModelDropOnlyTheirOp() {
        byte[] blake3Link = new byte[42];
        byte[] head = {(byte) 0xa1, 0x61, 0x61, (byte) 0xd8, 0x2a, 0x58, 0x25, 0x00, 0x01, 0x71, 0x1e, 0x20};
        System.arraycopy(head, 0, blake3Link, 0, head.length);
        byte[] sha256Link = DagCbor.encode(Map.of("a", RECORD_CID));
        byte[][] bad = {
            {(byte) 0xa1, 0x61, 0x61, (byte) 0xfb, 0x3f, (byte) 0xf0, 0, 0, 0, 0, 0, 0}, // a float
            blake3Link, // a link whose hash is not SHA-256
            Arrays.copyOf(RECORD, RECORD.length + 1), // trailing bytes
            DagCbor.encode(List.of("x")), // not a map
        };
        Map<Cid, byte[]> blocks = new LinkedHashMap<>();
        List<Map<String, Object>> ops = new ArrayList<>();
        for (int i = 0; i < bad.length; i++) {
            blocks.put(Cid.ofDagCbor(bad[i]), bad[i]);
            ops.add(op(i % 2 == 0 ? "create" : "update", "app.bsky.feed.like/3mptbyplj5d2" + (char) ('a' + i), Cid.ofDagCbor(bad[i])));
        }
        blocks.put(Cid.ofDagCbor(sha256Link), sha256Link);
        ops.add(op("create", "app.bsky.feed.like/3mptbyplj5d2z", Cid.ofDagCbor(sha256Link)));
        Map<String, Object> body = commit(DID, REV, ops, true);
        body.put("blocks", CarWriter.toBytes(List.of(RECORD_CID), blocks));
        RowConverter.Result r = convert(frame(message("#commit"), body));
        assertEquals(List.of(Drop.INVALID_DATA_MODEL, Drop.INVALID_DATA_MODEL, Drop.INVALID_DATA_MODEL,
                Drop.INVALID_DATA_MODEL), r.drops().stream().map(Drop::reason).toList());
        assertEquals(1, r.rows().size(), "a record linking by SHA-256 passes");
        assertEquals("3mptbyplj5d2z", r.rows().get(0).rkey());
    }

    @Test
    void emptyCarDropsCreatesButKeepsDeletes() {
        RowConverter.Result r = convert(frame(message("#commit"), commit(DID, REV, List.of(
                op("create", "app.bsky.feed.like/3mptbyplj5d2a", RECORD_CID),
                op("delete", "app.bsky.feed.like/3mptbyplj5d2b", null)), false)));
        assertEquals(List.of(Drop.MISSING_BLOCK), r.drops().stream().map(Drop::reason).toList());
        assertEquals(1, r.rows().size());
        assertEquals(ArchiveRow.KIND_DELETE, r.rows().get(0).kind());
    }

    @Test
    void unknownActionIsADecodeError() {
        byte[] f = frame(message("#commit"), commit(DID, REV, List.of(op("upsert", "app.bsky.feed.like/x", RECORD_CID)), true));
        DecodeException e = assertThrows(DecodeException.class, () -> convert(f));
        assertEquals("firehose_op_action", e.reason());
    }

    @Test
    void identityAccountAndSyncStoreTheirBodyBytes() {
        Map<String, Object> identity = new LinkedHashMap<>();
        identity.put("did", DID);
        identity.put("seq", 7L);
        identity.put("time", "2026-07-04T14:38:07.877Z");
        identity.put("handle", "alice.example.com");
        RowConverter.Result r = convert(frame(message("#identity"), identity));
        assertEquals(ArchiveRow.KIND_IDENTITY, r.rows().get(0).kind());
        assertArrayEquals(DagCbor.encode(identity), r.rows().get(0).payload().toByteArray());

        Map<String, Object> account = new LinkedHashMap<>(Map.of("did", DID, "seq", 8L, "time", "t", "active", false));
        account.put("status", "deleted");
        r = convert(frame(message("#account"), account));
        assertEquals(ArchiveRow.KIND_ACCOUNT, r.rows().get(0).kind());
        assertArrayEquals(DagCbor.encode(account), r.rows().get(0).payload().toByteArray());

        Map<String, Object> sync = new LinkedHashMap<>(Map.of("did", DID, "seq", 9L, "time", "t", "rev", REV,
                "blocks", new byte[] {1, 2, 3}));
        r = convert(frame(message("#sync"), sync));
        ArchiveRow row = r.rows().get(0);
        assertEquals(ArchiveRow.KIND_SYNC, row.kind());
        assertEquals(REV, row.rev());
        assertArrayEquals(DagCbor.encode(sync), row.payload().toByteArray());

        sync.put("rev", "");
        r = convert(frame(message("#sync"), sync));
        assertTrue(r.eventDropped());
        assertEquals(Drop.INVALID_REV, r.drops().get(0).reason());
    }

    @Test
    void infoErrorAndUnknownFramesArchiveNothing() {
        FirehoseMessage info = decoder.decode(frame(message("#info"), Map.of("name", "OutdatedCursor")));
        assertEquals(new FirehoseMessage.Info("OutdatedCursor", null), info);
        assertEquals(-1, info.seq());
        FirehoseMessage error = decoder.decode(frame(Map.of("op", -1L), Map.of("error", "FutureCursor", "message", "m")));
        assertEquals(new FirehoseMessage.Error("FutureCursor", "m"), error);
        FirehoseMessage unknown = decoder.decode(frame(message("#labels"), Map.of("x", 1L)));
        assertEquals(new FirehoseMessage.Unknown("#labels"), unknown);
        for (FirehoseMessage m : List.of(info, error, unknown)) {
            assertEquals(List.of(), converter.convert(m).rows());
            assertEquals(List.of(), converter.convert(m).drops());
        }
    }

    @Test
    void malformedFramesThrowDecodeExceptionOnly() {
        byte[] good = frame(message("#identity"), Map.of("did", DID, "seq", 7L, "time", "t"));
        byte[] trailing = Arrays.copyOf(good, good.length + 1);
        assertEquals("trailing_bytes", assertThrows(DecodeException.class, () -> decoder.decode(trailing)).reason());
        assertEquals("firehose_header", assertThrows(DecodeException.class,
                () -> decoder.decode(frame(Map.of("t", "#identity"), Map.of()))).reason());
        assertEquals("firehose_header", assertThrows(DecodeException.class,
                () -> decoder.decode(frame(Map.of("op", 2L, "t", "#identity"), Map.of()))).reason());
        assertEquals("firehose_missing_field", assertThrows(DecodeException.class,
                () -> decoder.decode(frame(message("#identity"), Map.of("seq", 7L)))).reason());
        assertEquals("cbor_type", assertThrows(DecodeException.class,
                () -> decoder.decode(frame(message("#identity"), Map.of("did", 5L, "seq", 7L)))).reason());
        assertThrows(DecodeException.class, () -> decoder.decode(new byte[0]));
        assertThrows(DecodeException.class, () -> decoder.decode(Arrays.copyOf(good, good.length - 1)));
        // Every truncation of a real-shaped commit frame fails cleanly.
        byte[] commitFrame = frame(message("#commit"), commit(DID, REV, List.of(
                op("create", "app.bsky.feed.like/3mptbyplj5d2a", RECORD_CID)), true));
        for (int cut = 0; cut < commitFrame.length; cut++) {
            byte[] truncated = Arrays.copyOf(commitFrame, cut);
            assertThrows(DecodeException.class, () -> convert(truncated), "cut at " + cut);
        }
    }

    @Test
    void frameFileRejectsTruncationAndOversizedLengths() throws IOException {
        RelayFrameFile file = new RelayFrameFile(new ByteArrayInputStream(new byte[] {3, 0, 0, 0, 9, 9, 9, 2, 0}));
        assertArrayEquals(new byte[] {9, 9, 9}, file.next());
        assertEquals(7, file.offset());
        assertEquals("frame_file_truncated", assertThrows(DecodeException.class, file::next).reason());
        RelayFrameFile huge = new RelayFrameFile(new ByteArrayInputStream(new byte[] {0, 0, 0, 0x7f}));
        assertEquals("frame_file_too_large", assertThrows(DecodeException.class, huge::next).reason());
        assertEquals(null, new RelayFrameFile(new ByteArrayInputStream(new byte[0])).next());
    }
}
