package jetstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import jetstream.planner.PlanFilter;
import jetstream.planner.PlanLimits;
import jetstream.segment.BlockBuilder;
import jetstream.segment.BlockView;
import jetstream.segment.ZstdFrames;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Archive events decode did, rkey and rev from the block body on demand: they must equal the
 * stored fields exactly (non-ASCII and empty values included), and a DID filter still selects rows.
 */
@Tag("unit")
class BlockDecoderTest {
    private static byte[] b(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void eventsCarryTheStoredFieldsAndDidFiltersStillApply() {
        BlockBuilder rows = new BlockBuilder();
        String[] dids = {"did:plc:alice", "did:web:bob.example", "did:plc:alice", "did:plc:carol"};
        String[] rkeys = {"3kabc", "self", "ünïcødé-rkey", null};
        String[] revs = {"3mrev1", "3mrev2", null, null};
        int[] kinds = {1, 1, 3, 4};
        for (int i = 0; i < dids.length; i++) {
            boolean commit = kinds[i] <= 3;
            rows.add(10 + i, 1_760_000_000_000_000L + i, 0, kinds[i], b(dids[i]), commit ? b("app.bsky.feed.post") : null,
                    commit ? b(rkeys[i]) : null, b(revs[i]), kinds[i] == 3 ? null : new byte[] {(byte) 0xa0});
        }
        byte[] body = rows.toBody();
        byte[] frame;
        try (ZstdFrames z = new ZstdFrames()) {
            frame = z.compress(body, 0, body.length);
        }
        BlockView v = new BlockView().decode(body, 0, body.length);

        List<Event> all = new ArrayList<>();
        new BlockDecoder(true, false).decode(frame, null, PlanFilter.all(), all);
        assertEquals(4, all.size());
        for (int i = 0; i < 4; i++) {
            Event e = all.get(i);
            assertEquals(10 + i, e.seq());
            assertEquals(v.did(i), e.did());
            assertEquals(v.rkey(i), e.rkey());
            assertEquals(v.rev(i), e.rev());
            assertEquals(v.collection(i), e.collection());
            assertEquals(dids[i], e.did(), "cached value is stable");
        }
        assertEquals("ünïcødé-rkey", all.get(2).rkey());
        assertEquals("", all.get(3).rkey());

        List<Event> alice = new ArrayList<>();
        PlanFilter onlyAlice = PlanFilter.parse(null, List.of("did:plc:alice"), null, null, null, PlanLimits.DEFAULTS);
        new BlockDecoder(true, false).decode(frame, null, onlyAlice, alice);
        assertEquals(List.of(10L, 12L), alice.stream().map(Event::seq).toList());
        assertEquals("did:plc:alice", alice.get(1).did());
        assertEquals(all.get(0).toJson(), alice.get(0).toJson(), "the same wire JSON either way");
    }
}
