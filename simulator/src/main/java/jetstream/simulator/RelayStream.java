package jetstream.simulator;

import static jetstream.simulator.SimXrpc.badRequest;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.function.BooleanSupplier;

/**
 * The relay's firehose over WebSocket ({@code subscribeRepos}): replay from a cursor out of the {@link Firehose}
 * buffer, then live; the firehose fault knobs (disconnects, malformed, oversize and poison frames) are injected here.
 */
final class RelayStream {
    private final SimConfig cfg;
    private final Firehose firehose;
    private final ExecutorService senders;
    private final BooleanSupplier stopped;

    RelayStream(SimConfig cfg, Firehose firehose, ExecutorService senders, BooleanSupplier stopped) {
        this.cfg = cfg;
        this.firehose = firehose;
        this.senders = senders;
        this.stopped = stopped;
    }

    /** {@code com.atproto.sync.subscribeRepos}: upgrades and streams from the cursor on a sender thread. */
    void subscribe(Exchange ex) throws IOException {
        Long cursor = null;
        String c = ex.param("cursor");
        if (c != null && !c.isEmpty()) {
            try {
                cursor = Long.parseLong(c);
            } catch (NumberFormatException e) {
                badRequest(ex, "InvalidRequest", "cursor must be an integer");
                return;
            }
        }
        if (!ex.isWebSocketRequest()) {
            badRequest(ex, "InvalidRequest", "subscribeRepos is a WebSocket subscription");
            return;
        }
        WebSocket ws = ex.upgrade();
        Long from = cursor;
        senders.execute(() -> stream(ws, from));
    }

    private void stream(WebSocket ws, Long cursor) {
        try {
            long pos;
            long head = firehose.head();
            if (cursor == null) {
                pos = head;
            } else if (cursor > head) {
                ws.sendBinary(Frames.error("FutureCursor", "Cursor in the future."));
                ws.close(1000, "FutureCursor");
                return;
            } else if (cursor < firehose.oldest() - 1) {
                ws.sendBinary(Frames.info("OutdatedCursor", "Requested cursor exceeded limit. Possibly missing events"));
                pos = firehose.oldest() - 1;
            } else {
                pos = cursor;
            }
            int sent = 0;
            while (ws.isOpen() && !stopped.getAsBoolean()) {
                if (cfg.faults.disconnectEvery > 0 && sent >= cfg.faults.disconnectEvery) {
                    ws.drop();
                    return;
                }
                byte[] frame;
                try {
                    frame = firehose.next(pos, 250);
                } catch (IllegalStateException gone) {
                    ws.sendBinary(Frames.error("ConsumerTooSlow", "Stream consumer too slow"));
                    ws.close(1008, "ConsumerTooSlow");
                    return;
                }
                if (frame != null) {
                    if (Faults.every(cfg.faults.malformedFrameEvery, pos + 1)) {
                        ws.sendBinary(malformed(pos + 1, frame));
                    }
                    if (Faults.every(cfg.faults.oversizeFrameEvery, pos + 1)) {
                        ws.sendBinary(new byte[17 << 20]);
                    }
                    if (Faults.every(cfg.faults.poisonFrameEvery, pos + 1) && pos > 0) {
                        ws.sendBinary(poison(pos));
                    }
                    ws.sendBinary(frame);
                    sent++;
                    pos++;
                }
            }
        } catch (IOException e) {
            ws.abort();
        } catch (InterruptedException e) {
            ws.abort();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A frame no decoder may accept, one of four kinds by seq: the real frame cut in half, garbage
     * starting with a stray CBOR break, a header without a body, an unknown op.
     */
    private byte[] malformed(long seq, byte[] real) {
        long kind = seq / cfg.faults.malformedFrameEvery % 4;
        if (kind == 0) {
            return java.util.Arrays.copyOf(real, real.length / 2);
        }
        if (kind == 1) {
            byte[] junk = new byte[48];
            Prng.of(cfg.seed, 11, seq).nextBytes(junk);
            junk[0] = (byte) 0xff;
            return junk;
        }
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("op", kind == 2 ? 1L : 7L);
        header.put("t", "#commit");
        byte[] h = jetstream.atproto.cbor.DagCbor.encode(header);
        if (kind == 2) {
            return h;
        }
        byte[] body = jetstream.atproto.cbor.DagCbor.encode(Map.of());
        byte[] out = java.util.Arrays.copyOf(h, h.length + body.length);
        System.arraycopy(body, 0, out, h.length, body.length);
        return out;
    }

    /** A well-formed {@code #commit} at {@code seq} whose one op has the action {@code frob}. */
    private static byte[] poison(long seq) {
        Map<String, Object> op = new LinkedHashMap<>();
        op.put("action", "frob");
        op.put("path", "app.bsky.feed.post/3jzfcijpj2z2a");
        op.put("cid", null);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("seq", seq);
        body.put("repo", "did:plc:poisonpoisonpoisonpoison");
        body.put("rev", "3jzfcijpj2z2a");
        body.put("ops", List.of(op));
        body.put("blocks", new byte[0]);
        body.put("time", "2026-01-01T00:00:00Z");
        return Frames.message("#commit", body);
    }
}
