package jetstream.atproto.firehose;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.atproto.DecodeException;
import jetstream.atproto.cbor.DagCbor;
import jetstream.atproto.json.JsonBuffer;
import jetstream.atproto.syntax.Did;
import jetstream.atproto.syntax.Nsid;
import jetstream.atproto.syntax.RecordKey;
import jetstream.atproto.syntax.Tid;
import jetstream.wire.V1Json;
import jetstream.wire.V2Json;
import jetstream.wire.WireEvent;
import org.junit.jupiter.api.Test;

/**
 * Seeded fuzzing of frame decoding, row conversion and both wire encoders over the relay corpus.
 * Half the inputs are byte-level mutations, half are structural: a field of the decoded header or
 * body replaced with a hostile value (sentinel and over-long names, bad TIDs, wrong types, missing
 * keys) and re-encoded, so the validation gate itself is exercised, not only the CBOR reader.
 * Only {@link DecodeException} may escape; every row that comes out satisfies the gate; every
 * rendered event is valid JSON.
 */
class FirehoseFuzzTest {
    private static final Object[] HOSTILE = {
        "", "$account", "$sync/self", "app.bsky.feed.like/", "app.bsky.feed.like/..", "app.bsky.feed.like/" + "k".repeat(300),
        "a".repeat(300) + ".b.c/k", "did:plc:", "DID:plc:x", "did:plc:" + "x".repeat(3000), "3mptbypluud2", "kzzzzzzzzzzzz",
        "create", "update", "delete", "resync", "\u2028<&>", "\uD83D\uDE00", -1L, 0L, Long.MAX_VALUE, true, null,
        new byte[0], new byte[] {1, 2, 3}, List.of(), Map.of(), List.of(Map.of("action", "create")),
    };

    private final ObjectMapper json = new ObjectMapper();

    @Test
    void mutatedFramesNeverEscapeTheGate() throws IOException {
        long iterations = Long.getLong("jetstream.fuzz.iterations", 100_000L);
        long seconds = Long.getLong("jetstream.fuzz.seconds", 600L);
        long seed = Long.getLong("jetstream.fuzz.seed", 20261202L);
        List<byte[]> seeds = RelayCorpusConversionTest.frames();
        assertEquals(91, seeds.size());

        FrameDecoder decoder = new FrameDecoder();
        RowConverter converter = new RowConverter();
        V1Json v1 = new V1Json();
        V2Json v2 = new V2Json();
        JsonBuffer out = new JsonBuffer();
        WireEvent event = new WireEvent();
        Random rnd = new Random(seed);
        long deadline = System.nanoTime() + seconds * 1_000_000_000L;
        long done = 0;
        long rows = 0;
        long drops = 0;
        boolean timedOut = false;
        while (done < iterations) {
            if ((done & 255) == 0 && System.nanoTime() > deadline) {
                timedOut = true;
                break;
            }
            byte[] seedFrame = seeds.get(rnd.nextInt(seeds.size()));
            byte[] input = rnd.nextBoolean() ? flipBytes(rnd, seedFrame) : restructure(rnd, seedFrame);
            try {
                RowConverter.Result result = converter.convert(decoder.decode(input));
                drops += result.drops().size();
                for (ArchiveRow row : result.rows()) {
                    checkRow(row);
                    event.set(done + 1, 1_783_175_888_085_434L, row);
                    out.reset();
                    if (v1.write(event, out)) {
                        json.readTree(out.toString());
                    }
                    out.reset();
                    v2.writeMessage(event, out);
                    json.readTree(out.toString());
                    rows++;
                }
            } catch (DecodeException expected) {
                // the only allowed failure
            } catch (Throwable t) {
                fail("iteration " + done + " (seed " + seed + ") threw " + t + " on " + HexFormat.of().formatHex(input), t);
            }
            done++;
        }
        System.out.println("FirehoseFuzzTest: " + done + " frames, " + rows + " rows rendered, " + drops + " drops, seed " + seed
                + (timedOut ? ", stopped by the " + seconds + " s cap" : ""));
        // the time guard only stops a hung or far too slow campaign: falling short of the floor fails
        assertTrue(done >= iterations, "only " + done + " of " + iterations + " iterations within the " + seconds
                + " s guard (jetstream.fuzz.seconds)");
        assertTrue(rows > 0 && drops > 0, "the campaign must reach both accepted rows and gate drops");
    }

    private static void checkRow(ArchiveRow row) {
        assertTrue(Did.isValid(row.did()), row.did());
        if (ArchiveRow.isCommitKind(row.kind())) {
            assertTrue(Nsid.isValid(row.collection()) && row.collection().length() <= ArchiveRow.MAX_COLLECTION_BYTES, row.collection());
            assertTrue(RecordKey.isValid(row.rkey()) && row.rkey().length() <= ArchiveRow.MAX_RKEY_BYTES, row.rkey());
            assertTrue(Tid.isValid(row.rev()), row.rev());
            assertEquals(row.kind() == ArchiveRow.KIND_DELETE, row.payload().length() == 0);
        } else {
            assertEquals("", row.collection());
            ByteSlice p = row.payload();
            DagCbor.decodeMap(p.buffer(), p.offset(), p.length());
            if (row.kind() == ArchiveRow.KIND_SYNC) {
                assertTrue(Tid.isValid(row.rev()), row.rev());
            }
        }
    }

    private static byte[] flipBytes(Random rnd, byte[] frame) {
        byte[] b = frame.clone();
        int flips = 1 + rnd.nextInt(3);
        for (int i = 0; i < flips; i++) {
            b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
        }
        return b;
    }

    /** Decodes header and body, replaces or removes one field (possibly inside an op), re-encodes. */
    @SuppressWarnings("unchecked")
    private static byte[] restructure(Random rnd, byte[] frame) {
        int h = DagCbor.itemLength(frame, 0, frame.length);
        Map<String, Object> header = new LinkedHashMap<>(DagCbor.decodeMap(frame, 0, h));
        Map<String, Object> body = new LinkedHashMap<>(DagCbor.decodeMap(frame, h, frame.length - h));
        Map<String, Object> target = rnd.nextInt(8) == 0 ? header : body;
        Object ops = body.get("ops");
        if (target == body && ops instanceof List && !((List<Object>) ops).isEmpty() && rnd.nextBoolean()) {
            List<Object> copy = new ArrayList<>((List<Object>) ops);
            Map<String, Object> op = new LinkedHashMap<>((Map<String, Object>) copy.get(0));
            copy.set(0, op);
            body.put("ops", copy);
            target = op;
        }
        List<String> keys = new ArrayList<>(target.keySet());
        String key = keys.isEmpty() ? "x" : keys.get(rnd.nextInt(keys.size()));
        if (rnd.nextInt(5) == 0) {
            target.remove(key);
        } else {
            target.put(key, HOSTILE[rnd.nextInt(HOSTILE.length)]);
        }
        byte[] a = DagCbor.encode(header);
        byte[] b = DagCbor.encode(body);
        byte[] f = new byte[a.length + b.length];
        System.arraycopy(a, 0, f, 0, a.length);
        System.arraycopy(b, 0, f, a.length, b.length);
        return f;
    }
}
