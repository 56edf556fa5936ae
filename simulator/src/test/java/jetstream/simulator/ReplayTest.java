package jetstream.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import jetstream.atproto.firehose.FirehoseMessage;
import jetstream.atproto.firehose.FrameDecoder;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The bounded replay buffer: cursors older than it, and subscribers that fall out of it. */
@Tag("component")
class ReplayTest {
    @Test
    void cursorOlderThanTheBufferGetsOutdatedCursorThenTheWholeBuffer() throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.bigRepos = 0;
        cfg.replayBuffer = 10;
        try (Simulator sim = Simulator.start(cfg)) {
            sim.advance(30);
            try (Clients.Subscriber sub = Clients.Subscriber.connect(sim.firehoseUrl() + "?cursor=5")) {
                List<byte[]> frames = sub.take(11, 30);
                FrameDecoder d = new FrameDecoder();
                FirehoseMessage.Info info = assertInstanceOf(FirehoseMessage.Info.class, d.decode(frames.get(0)));
                assertEquals("OutdatedCursor", info.name());
                for (int i = 1; i <= 10; i++) {
                    assertEquals(20 + i, d.decode(frames.get(i)).seq());
                }
            }
            // a cursor inside the buffer replays exactly what follows it
            try (Clients.Subscriber sub = Clients.Subscriber.connect(sim.firehoseUrl() + "?cursor=25")) {
                assertEquals(26, new FrameDecoder().decode(sub.take(1, 30).get(0)).seq());
            }
        }
    }

    @Test
    void subscriberThatFallsOutOfTheBufferGetsConsumerTooSlow() throws Exception {
        SimConfig cfg = SimConfig.small();
        cfg.bigRepos = 0;
        cfg.replayBuffer = 16;
        try (Simulator sim = Simulator.start(cfg); Socket s = new Socket()) {
            // a small window fixed before the handshake, so the relay's sender really blocks
            s.setReceiveBufferSize(4096);
            s.connect(new java.net.InetSocketAddress("127.0.0.1", sim.port()));
            s.setSoTimeout(60_000);
            s.getOutputStream().write(("GET /xrpc/com.atproto.sync.subscribeRepos?cursor=0 HTTP/1.1\r\nHost: x\r\n"
                    + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(s.getInputStream(), 1 << 16));
            String head = new String(in.readNBytes(12), StandardCharsets.ISO_8859_1);
            assertTrue(head.startsWith("HTTP/1.1 101"), head);
            int matched = 0;
            while (matched < 4) {
                int b = in.read();
                matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
            }
            FrameDecoder d = new FrameDecoder();
            // one event read proves the sender is streaming from cursor 0 before the relay races ahead
            sim.advance(1);
            FirehoseMessage last = d.decode(readFrame(in));
            assertEquals(1, last.seq());
            long lastSeq = 1;
            // not reading while the relay moves far past the buffer: several MiB of frames, more than the
            // kernel's largest send buffer (tcp_wmem max, 4 MiB by default), so the sender blocks and the buffer wraps
            sim.advance(7_999);
            while (true) {
                byte[] payload = readFrame(in);
                if (payload == null) {
                    break;
                }
                last = d.decode(payload);
                if (last.seq() > 0) {
                    assertEquals(lastSeq + 1, last.seq(), "frames before the error are contiguous");
                    lastSeq = last.seq();
                }
            }
            assertEquals("ConsumerTooSlow", assertInstanceOf(FirehoseMessage.Error.class, last).error());
            assertTrue(lastSeq < sim.headSeq() - cfg.replayBuffer, "fell behind at " + lastSeq);
        }
    }

    /** The next frame's payload, or null after asserting a 1008 close frame. */
    private static byte[] readFrame(DataInputStream in) throws java.io.IOException {
        int b0 = in.readUnsignedByte();
        int b1 = in.readUnsignedByte();
        long len = WebSocket.payloadLength(in, b1);
        byte[] payload = in.readNBytes((int) len);
        if ((b0 & 0x0f) == 0x8) {
            assertEquals(1008, ((payload[0] & 0xff) << 8) | (payload[1] & 0xff));
            return null;
        }
        return payload;
    }
}
