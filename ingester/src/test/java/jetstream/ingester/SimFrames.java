package jetstream.ingester;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.util.NavigableMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentSkipListMap;
import jetstream.atproto.DecodeException;
import jetstream.atproto.firehose.FrameDecoder;
import jetstream.simulator.Simulator;

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
                    new WebSocket.Listener() {
                        private final java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();

                        @Override
                        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer d, boolean last) {
                            byte[] b = new byte[d.remaining()];
                            d.get(b);
                            buf.write(b, 0, b.length);
                            if (last) {
                                byte[] f = buf.toByteArray();
                                buf.reset();
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
                            }
                            ws.request(1);
                            return null;
                        }

                        @Override
                        public CompletionStage<?> onClose(WebSocket ws, int code, String reason) {
                            ended.complete(null);
                            return null;
                        }

                        @Override
                        public void onError(WebSocket ws, Throwable error) {
                            ended.complete(null);
                        }
                    }).join();
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
