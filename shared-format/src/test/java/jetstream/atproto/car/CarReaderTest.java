package jetstream.atproto.car;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.CborReader;
import jetstream.atproto.cbor.CorpusFrames;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.cid.Cid;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class CarReaderTest {
    private static final byte[] REPO = Vectors.bytes("jetstream-corpus/repo.car");

    private static List<CarBlock> all(CarReader r) throws IOException {
        List<CarBlock> out = new ArrayList<>();
        for (CarBlock b = r.next(); b != null; b = r.next()) {
            out.add(b);
        }
        return out;
    }

    @Test
    void repoCarBlocksVerifyAndCommitMatchesGoat() throws IOException {
        CarReader r = CarReader.of(REPO);
        assertEquals(1, r.roots().size());
        List<CarBlock> blocks = all(r);
        assertTrue(blocks.size() > 23, "blocks: " + blocks.size());
        for (CarBlock b : blocks) {
            assertEquals(b.cid(), Cid.ofDagCbor(b.buffer(), b.offset(), b.length()));
            DagCbor.validate(b.buffer(), b.offset(), b.length());
        }
        Map<Cid, CarBlock> index = CarReader.readAll(REPO, 0, REPO.length);
        CarBlock commitBlock = index.get(r.roots().get(0));
        assertNotNull(commitBlock, "root block present");
        Map<String, Object> commit = DagCbor.decodeMap(commitBlock.buffer(), commitBlock.offset(), commitBlock.length());
        Map<String, String> expected = new LinkedHashMap<>();
        Vectors.lines("jetstream-corpus/car_expected_commit.txt").forEach(l -> {
            int i = l.indexOf(": ");
            expected.put(l.substring(0, i), l.substring(i + 2));
        });
        assertEquals(expected.get("DID"), commit.get("did"));
        assertEquals(expected.get("Revision"), commit.get("rev"));
        assertEquals(Cid.parse(expected.get("Data CID")), commit.get("data"));
        assertEquals(Long.parseLong(expected.get("ATProto Repo Spec Version")), commit.get("version"));
        assertTrue(commit.containsKey("prev") && commit.get("prev") == null);

        // stream mode yields the same blocks
        List<CarBlock> streamed = all(CarReader.open(new ByteArrayInputStream(REPO)));
        assertEquals(blocks.size(), streamed.size());
        for (int i = 0; i < blocks.size(); i++) {
            assertEquals(blocks.get(i).cid(), streamed.get(i).cid());
            assertArrayEquals(blocks.get(i).copyData(), streamed.get(i).copyData());
        }
    }

    @Test
    void expectedRecordCidsArePresent() {
        Map<Cid, CarBlock> index = CarReader.readAll(REPO, 0, REPO.length);
        long n = Vectors.lines("jetstream-corpus/car_expected_records.tsv").filter(l -> !l.isBlank()).map(l -> {
            Cid cid = Cid.parse(l.split("\t")[1]);
            CarBlock b = index.get(cid);
            assertNotNull(b, l);
            assertEquals(cid.toString(), Cid.dagCborString(b.buffer(), b.offset(), b.length()));
            return cid;
        }).count();
        assertEquals(23, n);
    }

    /** facts doc Appendix C.2. */
    @Test
    void appendixC2RecordCids() {
        Map<Cid, CarBlock> index = CarReader.readAll(REPO, 0, REPO.length);
        String[] cids = {"bafyreia3zwwmogntyn7zhsr6kyzvelma2l77axbldfja6jwcqbjq5e5tj4",
            "bafyreigmpffgbpgzfhvml36cecdcz7cn2v7kde2ar7ib4jgol7grj4jyly",
            "bafyreidc3d3q7ddtrdnoc52t5lfzmpu7rp2yvhynwdna27f5etlz3pzu4e"};
        int n = 0;
        for (String s : cids) {
            CarBlock b = index.get(Cid.parse(s));
            assertNotNull(b, s);
            assertEquals(s, Cid.dagCborString(b.buffer(), b.offset(), b.length()));
            n++;
        }
        assertEquals(3, n);
    }

    @Test
    void writerReproducesRepoCarBytes() throws IOException {
        CarReader r = CarReader.of(REPO);
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        CarWriter w = new CarWriter(bos, r.roots());
        for (CarBlock b = r.next(); b != null; b = r.next()) {
            w.write(b.cid(), b.buffer(), b.offset(), b.length());
        }
        assertArrayEquals(REPO, bos.toByteArray());
    }

    @Test
    void relayFrameBlocksParse() {
        int cars = 0;
        int blocks = 0;
        for (byte[] frame : CorpusFrames.load()) {
            int headerLen = DagCbor.itemLength(frame, 0, frame.length);
            Map<String, Object> body = DagCbor.decodeMap(frame, headerLen, frame.length - headerLen);
            Object car = body.get("blocks");
            if (car instanceof byte[] && ((byte[]) car).length > 0) {
                byte[] c = (byte[]) car;
                blocks += CarReader.readAll(c, 0, c.length).size();
                cars++;
            }
        }
        assertTrue(cars > 50, "frames with CARs: " + cars);
        assertTrue(blocks > cars, "blocks: " + blocks);
    }

    @Test
    void tamperedBlockFailsVerification() throws IOException {
        byte[] car = REPO.clone();
        car[car.length - 1] ^= 1;
        CarReader r = CarReader.of(car);
        DecodeException e = assertThrows(DecodeException.class, () -> all(r));
        assertEquals("car_cid_mismatch", e.reason());
    }

    @Test
    void rejectsMalformedCars() {
        byte[] truncated = java.util.Arrays.copyOf(REPO, REPO.length - 5);
        assertThrows(DecodeException.class, () -> all(CarReader.of(truncated)));
        assertThrows(DecodeException.class, () -> all(CarReader.open(new ByteArrayInputStream(truncated))));
        assertThrows(DecodeException.class, () -> CarReader.of(new byte[0]));
        assertThrows(DecodeException.class, () -> CarReader.of(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0x7f}));
        Map<String, Object> v2 = new LinkedHashMap<>();
        v2.put("roots", List.of());
        v2.put("version", 2L);
        byte[] h = DagCbor.encode(v2);
        byte[] car = new byte[h.length + 1];
        car[0] = (byte) h.length;
        System.arraycopy(h, 0, car, 1, h.length);
        assertEquals("car_version", assertThrows(DecodeException.class, () -> CarReader.of(car)).reason());
    }

    @Test
    void oversizedFrameRejectedBeforeAllocation() throws IOException {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        new CarWriter(bos, List.of());
        // a frame claiming 1 GiB, followed by nothing
        bos.write(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x04});
        byte[] car = bos.toByteArray();
        CarReader r = CarReader.open(new ByteArrayInputStream(car), 1 << 20);
        assertEquals("car_block_too_large", assertThrows(DecodeException.class, r::next).reason());
        CarReader m = CarReader.of(car);
        assertEquals("car_truncated", assertThrows(DecodeException.class, m::next).reason());
    }

    @Test
    void writerRoundTrip() throws IOException {
        Map<Cid, byte[]> blocks = new LinkedHashMap<>();
        for (int i = 0; i < 5; i++) {
            byte[] data = DagCbor.encode(Map.of("i", (long) i));
            blocks.put(Cid.ofDagCbor(data), data);
        }
        Cid root = blocks.keySet().iterator().next();
        byte[] car = CarWriter.toBytes(List.of(root), blocks);
        CarReader r = CarReader.open(new ByteArrayInputStream(car));
        assertEquals(List.of(root), r.roots());
        int n = 0;
        for (CarBlock b = r.next(); b != null; b = r.next()) {
            assertArrayEquals(blocks.get(b.cid()), b.copyData());
            n++;
        }
        assertEquals(5, n);
        assertNull(r.next());
        assertEquals(CborReader.KIND_MAP, new CborReader(blocks.get(root)).peekKind());
    }
}
