package jetstream.testing;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import jetstream.atproto.cbor.DagCbor;

/** Mutations of relay frames for the fuzz campaigns: byte flips and structural field replacement. */
public final class FrameMutations {
    /** Hostile field values: sentinel and over-long names, bad TIDs, odd actions, wrong types. */
    public static final Object[] HOSTILE = {
        "", "$account", "$sync/self", "app.bsky.feed.like/", "app.bsky.feed.like/..", "app.bsky.feed.like/" + "k".repeat(300),
        "a".repeat(300) + ".b.c/k", "did:plc:", "DID:plc:x", "did:plc:" + "x".repeat(3000), "3mptbypluud2", "kzzzzzzzzzzzz",
        "create", "update", "delete", "resync", "frob", "\u2028<&>", "\uD83D\uDE00", -1L, 0L, Long.MAX_VALUE, true, null,
        new byte[0], new byte[] {1, 2, 3}, List.of(), Map.of(), List.of(Map.of("action", "create")),
    };

    private FrameMutations() {}

    /** The frame with one to three single-bit flips. */
    public static byte[] flipBytes(Random rnd, byte[] frame) {
        byte[] b = frame.clone();
        int flips = 1 + rnd.nextInt(3);
        for (int i = 0; i < flips; i++) {
            b[rnd.nextInt(b.length)] ^= (byte) (1 << rnd.nextInt(8));
        }
        return b;
    }

    /** Decodes header and body, replaces or removes one field (possibly inside an op), re-encodes. */
    @SuppressWarnings("unchecked")
    public static byte[] restructure(Random rnd, byte[] frame) {
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
