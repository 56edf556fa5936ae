package jetstream.ingester;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.util.NavigableMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.simulator.Simulator;
import jetstream.testing.WholeMessages;

/** Test helper: every decodable firehose frame of a simulator from seq 1 to its head, read over its relay WebSocket. */
final class SimFrames {
    private SimFrames() {}

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
