package jetstream.simulator;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * The server side of an upgraded connection (RFC 6455): unmasked binary frames out; the client's
 * control frames (ping, close) answered by {@link #runUntilClosed}, which runs on the connection's
 * thread while another thread sends.
 */
final class WebSocket {
    private static final int MAX_CLIENT_PAYLOAD = 64 * 1024;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private volatile boolean open = true;
    private boolean closeSent;

    WebSocket(Socket socket, InputStream in, OutputStream out) {
        this.socket = socket;
        this.in = new DataInputStream(in);
        this.out = out;
    }

    boolean isOpen() {
        return open;
    }

    void sendBinary(byte[] payload) throws IOException {
        writeFrame(0x2, payload, 0, payload.length);
    }

    /** Writes bytes as they are (a fault: something that is not a well-formed frame). */
    synchronized void sendRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    private synchronized void writeFrame(int opcode, byte[] p, int off, int len) throws IOException {
        if (closeSent) {
            throw new IOException("WebSocket closing");
        }
        byte[] head = new byte[10];
        int h = 0;
        head[h++] = (byte) (0x80 | opcode);
        if (len < 126) {
            head[h++] = (byte) len;
        } else if (len < 65536) {
            head[h++] = 126;
            head[h++] = (byte) (len >>> 8);
            head[h++] = (byte) len;
        } else {
            head[h++] = 127;
            for (int i = 7; i >= 0; i--) {
                head[h++] = (byte) (i >= 4 ? 0 : len >>> (8 * i));
            }
        }
        out.write(head, 0, h);
        out.write(p, off, len);
        out.flush();
    }

    /** Sends a close frame; the connection ends when the client answers (or after two seconds). */
    void close(int code, String reason) {
        byte[] r = reason.getBytes(StandardCharsets.UTF_8);
        byte[] p = new byte[2 + Math.min(r.length, 123)];
        p[0] = (byte) (code >>> 8);
        p[1] = (byte) code;
        System.arraycopy(r, 0, p, 2, p.length - 2);
        try {
            synchronized (this) {
                if (!closeSent) {
                    writeFrame(0x8, p, 0, p.length);
                    closeSent = true;
                }
            }
            socket.setSoTimeout(2000);
        } catch (IOException e) {
            abort();
        }
    }

    /**
     * Ends the TCP connection after what was sent so far, with no close frame (a relay that went
     * away: the client sees an abnormal closure, 1006, after the last whole frame).
     */
    synchronized void drop() {
        open = false;
        try {
            out.flush();
            socket.shutdownOutput();
            socket.close();
        } catch (IOException e) {
            abort();
        }
    }

    /** Drops the TCP connection with no close frame (a reset, as when a relay dies). */
    void abort() {
        open = false;
        try {
            socket.setSoLinger(true, 0);
            socket.close();
        } catch (IOException ignored) {
            // already gone
        }
    }

    /**
     * The payload length a frame header announces, read after its second byte {@code b1} (RFC 6455
     * §5.2: 7 bits, or 126/127 followed by a 16- or 64-bit length); the mask bit of {@code b1} is ignored.
     */
    static long payloadLength(DataInputStream in, int b1) throws IOException {
        long len = b1 & 0x7f;
        if (len == 126) {
            return in.readUnsignedShort();
        }
        return len == 127 ? in.readLong() : len;
    }

    /** Reads client frames until the connection ends, answering pings and the close handshake. */
    void runUntilClosed() {
        try {
            while (true) {
                int b0 = in.readUnsignedByte();
                int b1 = in.readUnsignedByte();
                long len = payloadLength(in, b1);
                if (len < 0 || len > MAX_CLIENT_PAYLOAD) {
                    break;
                }
                byte[] mask = new byte[4];
                if ((b1 & 0x80) != 0) {
                    in.readFully(mask);
                }
                byte[] payload = new byte[(int) len];
                in.readFully(payload);
                for (int i = 0; i < payload.length; i++) {
                    payload[i] ^= mask[i & 3];
                }
                int opcode = b0 & 0x0f;
                if (opcode == 0x8) {
                    synchronized (this) {
                        if (!closeSent) {
                            writeFrame(0x8, payload, 0, Math.min(payload.length, 2));
                            closeSent = true;
                        }
                    }
                    break;
                } else if (opcode == 0x9) {
                    synchronized (this) {
                        if (!closeSent) {
                            writeFrame(0xA, payload, 0, payload.length);
                        }
                    }
                }
            }
        } catch (SocketTimeoutException e) {
            // the client never answered our close
        } catch (IOException e) {
            // connection lost
        } finally {
            open = false;
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }
}
