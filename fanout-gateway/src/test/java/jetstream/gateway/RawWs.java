package jetstream.gateway;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A WebSocket read off a plain socket, byte for byte: the upgrade's response head, then each server frame (unmasked,
 * uncompressed) in the order the gateway wrote it. For order checks that must not depend on how a client library
 * dispatches a frame that arrived in the same read as the 101.
 */
final class RawWs implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    final String head;

    /** Sends the upgrade for {@code path}, with {@code headers} (name, value, …) added, and reads the response head. */
    RawWs(int port, String path, String... headers) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(10_000);
        StringBuilder req = new StringBuilder("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n");
        for (int i = 0; i < headers.length; i += 2) {
            req.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
        }
        socket.getOutputStream().write(req.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
        in = new DataInputStream(socket.getInputStream());
        StringBuilder h = new StringBuilder();
        while (!h.toString().endsWith("\r\n\r\n")) {
            h.append((char) in.readUnsignedByte());
        }
        head = h.toString();
    }

    /** The next whole text message (continuations joined); fails on any other frame. */
    String nextText() throws IOException {
        ByteArrayOutputStream message = new ByteArrayOutputStream();
        boolean fin;
        do {
            int b0 = in.readUnsignedByte();
            int b1 = in.readUnsignedByte();
            fin = (b0 & 0x80) != 0;
            int opcode = b0 & 0x0F;
            if (opcode != (message.size() == 0 ? 1 : 0) || (b1 & 0x80) != 0) {
                throw new IOException("not an unmasked text frame: opcode " + opcode + ", mask bit " + (b1 >> 7));
            }
            long len = b1 & 0x7F;
            if (len == 126) {
                len = in.readUnsignedShort();
            } else if (len == 127) {
                len = in.readLong();
            }
            byte[] payload = new byte[Math.toIntExact(len)];
            in.readFully(payload);
            message.write(payload);
        } while (!fin);
        return message.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
