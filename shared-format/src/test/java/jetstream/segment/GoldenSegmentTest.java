package jetstream.segment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The Go reference's committed segment fixtures, read and rebuilt. */
@Tag("unit")
class GoldenSegmentTest {
    static final String CORPUS = "jetstream-corpus/golden_corpus_segment.jss";
    static final String LEGACY = "jetstream-corpus/legacy_fixed4096_blooms.jss";
    static final String SEAL = "jetstream-corpus/golden_seal.bin";
    static final String DID = "did:plc:53iucmf5ldftgqyf2ac7hmhd";

    private final ZstdFrames zstd = new ZstdFrames();

    @Test
    void corpusHeaderMatchesAppendixC1() throws Exception {
        SegmentReader r = SegmentReader.open(Vectors.resolve(CORPUS));
        SegmentHeader h = r.header();
        assertEquals(0x8ac51e3e2c8fb641L, h.checksum());
        assertEquals(1, h.version());
        assertEquals(3, h.blockCount());
        assertEquals(23, h.eventCount());
        assertEquals(1, h.uniqueDidCount());
        assertEquals(1, h.minSeq());
        assertEquals(23, h.maxSeq());
        assertEquals(1750000000000001L, h.minWitnessedAt());
        assertEquals(1750000000000023L, h.maxWitnessedAt());
        assertEquals(3004, h.footerOffset());
        assertEquals(3160, h.didBloomOffset());
        assertEquals(3249, h.blockDidBloomOffset());
        assertEquals(3524, h.collectionIndexOffset());
        assertEquals(3004, h.blockIndexOffset());
        assertEquals(3634, r.fileSize());
        byte[] raw = Vectors.bytes(CORPUS);
        assertArrayEquals(Arrays.copyOf(raw, 256), h.toBytes());
        assertEquals(new BlockIndexEntry(256, 1074, 2886, 8, 1, 8, 1750000000000001L, 1750000000000008L), r.entry(0));
        GloomFilter bloom = r.segmentBloom();
        assertEquals(GloomFilterTest.C3_SERIALIZED,
                java.util.HexFormat.of().formatHex(Arrays.copyOfRange(raw, 3160, 3249)));
        assertEquals(1, bloom.count());
        CollectionIndex ci = r.collectionIndex();
        assertEquals("CollectionIndex[app.bsky.actor.profile:1, app.bsky.feed.like:10, app.bsky.feed.post:6, "
                + "app.bsky.feed.repost:3, app.bsky.graph.follow:3; masks=03061c]", ci.toString());
        assertEquals(java.util.BitSet.valueOf(new long[] {0b011}), r.blocksForCollection("app.bsky.feed.like"));
        assertTrue(r.blocksForCollection("app.bsky.feed.generator").isEmpty());
    }

    @Test
    void everyCorpusRowIsARecordOfRepoCar() throws Exception {
        Map<String, String> expected = new HashMap<>();
        Vectors.lines("jetstream-corpus/car_expected_records.tsv").forEach(l -> {
            String[] p = l.split("\t");
            expected.put(p[0], p[1]);
        });
        byte[] car = Vectors.bytes("jetstream-corpus/repo.car");
        SegmentReader r = SegmentReader.open(Vectors.resolve(CORPUS));
        List<String> paths = new ArrayList<>();
        long[] prevSeq = {0};
        r.forEachRow(zstd, (block, v, i) -> {
            assertEquals(Kind.CREATE, v.kind(i));
            assertEquals(DID, v.did(i));
            assertEquals(prevSeq[0] + 1, v.seq(i));
            assertEquals(1750000000000000L + v.seq(i), v.witnessedAt(i));
            assertEquals(0, v.indexedAt(i));
            assertFalse(v.rev(i).isEmpty());
            String path = v.collection(i) + "/" + v.rkey(i);
            byte[] payload = v.payload(i);
            assertNotNull(payload);
            assertEquals(expected.get(path), cid(payload), path);
            assertTrue(indexOf(car, payload) >= 0, "payload of " + path + " is a block of repo.car");
            paths.add(path);
            prevSeq[0] = v.seq(i);
        });
        assertEquals(23, paths.size());
        assertEquals(expected.keySet(), new java.util.HashSet<>(paths));
        assertEquals("bafyreia3zwwmogntyn7zhsr6kyzvelma2l77axbldfja6jwcqbjq5e5tj4", expected.get(paths.get(0)));
        assertEquals("app.bsky.actor.profile/self", paths.get(0));
        BlockView first = r.block(0, new BlockView(), zstd);
        assertEquals("3migo7fijwi2k", first.rev(0));
        assertEquals(227, first.payloadLength(0));
    }

    @Test
    void appendixC2CidsFromPayloads() throws Exception {
        SegmentReader r = SegmentReader.open(Vectors.resolve(CORPUS));
        BlockView v = r.block(0, new BlockView(), zstd);
        assertEquals("bafyreia3zwwmogntyn7zhsr6kyzvelma2l77axbldfja6jwcqbjq5e5tj4", cid(v.payload(0)));
        assertEquals("bafyreigmpffgbpgzfhvml36cecdcz7cn2v7kde2ar7ib4jgol7grj4jyly", cid(v.payload(1)));
        assertEquals("bafyreidc3d3q7ddtrdnoc52t5lfzmpu7rp2yvhynwdna27f5etlz3pzu4e", cid(v.payload(2)));
    }

    @Test
    void everyFixtureVerifiesAndItsBloomsAnswerLikeGo() throws Exception {
        int fixtures = 0;
        for (String name : List.of(CORPUS, LEGACY, SEAL)) {
            SegmentVerifier.Result res = SegmentVerifier.verify(Vectors.resolve(name));
            assertTrue(res.ok(), name + ": " + res.reason());
            SegmentReader r = SegmentReader.open(Vectors.resolve(name));
            List<byte[]> dids = new ArrayList<>();
            r.forEachRow(zstd, (b, v, i) -> {
                byte[] did = v.did(i).getBytes(StandardCharsets.UTF_8);
                assertTrue(r.mightContainDid(did));
                assertTrue(r.blocksForDid(did).get(b), name + " block " + b);
                dids.add(did);
            });
            assertFalse(dids.isEmpty());
            int falsePositives = 0;
            for (int i = 0; i < 1000; i++) {
                if (r.mightContainDid(("did:plc:absent" + i).getBytes(StandardCharsets.UTF_8))) {
                    falsePositives++;
                }
            }
            assertTrue(falsePositives < 10, name + " false positives " + falsePositives);
            fixtures++;
        }
        assertEquals(3, fixtures);
    }

    @Test
    void legacyFixedCapacityBloomsAreReadable() throws Exception {
        SegmentReader r = SegmentReader.open(Vectors.resolve(LEGACY));
        assertEquals(0x90990e50dd911597L, r.header().checksum());
        assertEquals(8409, r.blockBlooms().bloomSizeBytes());
        for (int b = 0; b < r.blockCount(); b++) {
            assertEquals(131, r.blockBlooms().bloom(b).numBlocks());
            assertEquals(9, r.blockBlooms().bloom(b).k());
        }
        assertEquals(1, r.segmentBloom().numBlocks());
        assertEquals(15, r.segmentBloom().k());
        assertEquals(3, r.segmentBloom().count());
    }

    @Test
    void goldenSealShape() throws Exception {
        SegmentReader r = SegmentReader.open(Vectors.resolve(SEAL));
        assertEquals(1, r.blockCount());
        assertEquals(2, r.header().eventCount());
        assertEquals(2, r.header().uniqueDidCount());
        assertEquals(2, r.collectionIndex().collectionCount());
    }

    /**
     * Re-sealing each fixture's rows in the same block grouping reproduces every uncompressed
     * structure: block bodies, bloom bytes, the decoded collection index, and block index fields
     * other than placement (zstd bytes differ between libraries, so offsets and checksums do too).
     */
    @Test
    void resealingFixtureRowsReproducesEveryUncompressedStructure() throws Exception {
        int compared = 0;
        for (String name : List.of(CORPUS, LEGACY, SEAL)) {
            SegmentReader go = SegmentReader.open(Vectors.resolve(name));
            List<byte[]> bodies = new ArrayList<>();
            BlockView v = new BlockView();
            for (int b = 0; b < go.blockCount(); b++) {
                go.block(b, v, zstd);
                BlockBuilder builder = new BlockBuilder();
                for (int i = 0; i < v.size(); i++) {
                    builder.add(v, i);
                }
                byte[] body = builder.toBody();
                assertArrayEquals(Arrays.copyOfRange(v.buffer(), v.bodyOffset(), v.bodyOffset() + v.bodyLength()), body);
                bodies.add(body);
            }
            byte[] ours = TestSegments.seal(zstd, bodies);
            SegmentReader java = TestSegments.open(ours);
            assertTrue(SegmentVerifier.verify(ByteBuffer.wrap(ours)).ok());
            SegmentHeader gh = go.header();
            SegmentHeader jh = java.header();
            assertEquals(gh.blockCount(), jh.blockCount());
            assertEquals(gh.eventCount(), jh.eventCount());
            assertEquals(gh.uniqueDidCount(), jh.uniqueDidCount());
            assertEquals(gh.minSeq(), jh.minSeq());
            assertEquals(gh.maxSeq(), jh.maxSeq());
            assertEquals(gh.minWitnessedAt(), jh.minWitnessedAt());
            assertEquals(gh.maxWitnessedAt(), jh.maxWitnessedAt());
            for (int b = 0; b < go.blockCount(); b++) {
                BlockIndexEntry ge = go.entry(b);
                BlockIndexEntry je = java.entry(b);
                assertEquals(ge.withPlacement(0, 0), je.withPlacement(0, 0), name + " block " + b);
            }
            byte[] raw = Vectors.bytes(name);
            assertArrayEquals(section(raw, gh.didBloomOffset(), gh.blockDidBloomOffset()),
                    section(ours, jh.didBloomOffset(), jh.blockDidBloomOffset()), name + " segment bloom bytes");
            if (name.equals(LEGACY)) {
                // Sealed before jetstream #302 with capacity 4096; we size per-block blooms from the rows.
                assertEquals(8409, go.blockBlooms().bloomSizeBytes());
                assertEquals(89, java.blockBlooms().bloomSizeBytes());
            } else {
                assertArrayEquals(section(raw, gh.blockDidBloomOffset(), gh.collectionIndexOffset()),
                        section(ours, jh.blockDidBloomOffset(), jh.collectionIndexOffset()), name + " block blooms");
            }
            assertEquals(go.collectionIndex(), java.collectionIndex(), name);
            compared++;
        }
        assertEquals(3, compared);
    }

    private static byte[] section(byte[] file, long from, long to) {
        return Arrays.copyOfRange(file, (int) from, (int) to);
    }

    static String cid(byte[] payload) {
        byte[] digest;
        try {
            digest = MessageDigest.getInstance("SHA-256").digest(payload);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] bin = new byte[36];
        bin[0] = 0x01;
        bin[1] = 0x71;
        bin[2] = 0x12;
        bin[3] = 0x20;
        System.arraycopy(digest, 0, bin, 4, 32);
        return "b" + base32(bin);
    }

    private static String base32(byte[] data) {
        String alphabet = "abcdefghijklmnopqrstuvwxyz234567";
        StringBuilder sb = new StringBuilder();
        int buffer = 0;
        int bits = 0;
        for (byte b : data) {
            buffer = (buffer << 8) | (b & 0xFF);
            bits += 8;
            while (bits >= 5) {
                sb.append(alphabet.charAt((buffer >> (bits - 5)) & 31));
                bits -= 5;
            }
        }
        if (bits > 0) {
            sb.append(alphabet.charAt((buffer << (5 - bits)) & 31));
        }
        return sb.toString();
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
