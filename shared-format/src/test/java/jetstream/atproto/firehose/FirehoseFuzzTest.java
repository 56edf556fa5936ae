package jetstream.atproto.firehose;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.HexFormat;
import java.util.List;
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
import jetstream.testing.FrameMutations;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Seeded fuzzing of frame decoding, row conversion and both wire encoders over the relay corpus.
 * Half the inputs are byte-level mutations, half are structural: a field of the decoded header or
 * body replaced with a hostile value (sentinel and over-long names, bad TIDs, wrong types, missing
 * keys) and re-encoded, so the validation gate itself is exercised, not only the CBOR reader.
 * Only {@link DecodeException} may escape; every row that comes out satisfies the gate; every
 * rendered event is valid JSON.
 */
@Tag("fuzz")
class FirehoseFuzzTest {
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
            byte[] input = rnd.nextBoolean() ? FrameMutations.flipBytes(rnd, seedFrame) : FrameMutations.restructure(rnd, seedFrame);
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
}
