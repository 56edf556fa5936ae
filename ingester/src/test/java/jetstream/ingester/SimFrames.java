package jetstream.ingester;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.util.NavigableMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.simulator.SimConfig;
import jetstream.simulator.Simulator;
import jetstream.testing.WholeMessages;

/**
 * Test helper: every decodable firehose frame of a simulator from seq 1 to its head, read over its
 * relay WebSocket; a small world that only commits; hand-made {@code #account} frames.
 */
public final class SimFrames {
    private SimFrames() {}

    /** A small world of {@code accounts} active accounts whose traffic is commits only (no identity, account or sync events). */
    static SimConfig commitsOnly(long seed, int accounts) {
        SimConfig cfg = SimConfig.small();
        cfg.seed = seed;
        cfg.accounts = accounts;
        cfg.bigRepos = 0;
        cfg.mixIdentity = 0;
        cfg.mixAccount = 0;
        cfg.mixSync = 0;
        cfg.deactivatedFraction = 0;
        cfg.takendownFraction = 0;
        return cfg;
    }

    /** An {@code #account} frame (header + body, DAG-CBOR) as a relay sends it; inactive ones say "deactivated". */
    public static byte[] account(long seq, String did, boolean active) {
        java.util.Map<String, Object> header = new java.util.LinkedHashMap<>();
        header.put("op", 1L);
        header.put("t", "#account");
        java.util.Map<String, Object> body = new java.util.LinkedHashMap<>();
        body.put("seq", seq);
        body.put("did", did);
        body.put("time", "2026-01-01T00:00:00.000Z");
        body.put("active", active);
        if (!active) {
            body.put("status", "deactivated");
        }
        byte[] h = jetstream.atproto.cbor.DagCbor.encode(header);
        byte[] b = jetstream.atproto.cbor.DagCbor.encode(body);
        byte[] out = java.util.Arrays.copyOf(h, h.length + b.length);
        System.arraycopy(b, 0, out, h.length, b.length);
        return out;
    }

    static NavigableMap<Long, byte[]> all(Simulator sim) throws Exception {
        ConcurrentSkipListMap<Long, byte[]> frames = new ConcurrentSkipListMap<>();
        FrameDecoder decoder = new FrameDecoder();
        HttpClient http = HttpClient.newHttpClient();
        long head = sim.headSeq();
        while (frames.isEmpty() || frames.lastKey() < head) {
            long from = frames.isEmpty() ? 0 : frames.lastKey();
            CompletableFuture<Void> ended = new CompletableFuture<>();
            WebSocket socket = http.newWebSocketBuilder().buildAsync(URI.create(sim.firehoseUrl() + "?cursor=" + from),
                    new WholeMessages(f -> {
                        try {
                            long seq = decoder.decode(f).seq();
                            if (seq > 0) {
                                frames.put(seq, f);
                            }
                        } catch (DecodeException ignored) {
                            // the malformed-frame fault
                        }
                        if (!frames.isEmpty() && frames.lastKey() >= head) {
                            ended.complete(null);
                        }
                    }, ended)).join();
            try {
                // the disconnect fault may stop a subscription without closing it: resume from the last seq
                ended.get(5, java.util.concurrent.TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                socket.abort();
            }
            socket.abort();
        }
        return frames;
    }
}
