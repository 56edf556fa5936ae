package jetstream.feed;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import jetstream.atproto.DecodeException;

/**
 * The reader's side of the TCP feed handshake (docs/feed-protocol.md, "TCP transport"): connect,
 * verify the server certificate when TLS is on, answer the challenge with the HMAC of the shared
 * secret and send the one request ({@code SUBSCRIBE} or {@code READ_ACTIVE}) in the same write.
 */
public final class FeedTcp {
    private FeedTcp() {}

    /** An unconnected socket for {@code r}: TLS when it has a context. */
    public static Socket socket(FeedClient.Remote r) throws IOException {
        return r.tls() != null ? r.tls().getSocketFactory().createSocket() : new Socket();
    }

    /**
     * Connects {@code s} and completes the handshake within about {@code timeoutMillis} per step;
     * returns the stream the answer arrives on (the socket keeps {@code timeoutMillis} as read timeout).
     */
    public static InputStream open(Socket s, FeedClient.Remote r, int timeoutMillis, FeedFrame request) throws IOException {
        int timeout = Math.max(1, timeoutMillis);
        s.setTcpNoDelay(true);
        s.setSoTimeout(timeout);
        s.connect(new InetSocketAddress(r.host(), r.port()), timeout);
        if (s instanceof SSLSocket ssl) {
            SSLParameters p = ssl.getSSLParameters();
            p.setEndpointIdentificationAlgorithm("HTTPS");
            ssl.setSSLParameters(p);
            ssl.startHandshake();
        }
        InputStream in = s.getInputStream();
        byte[] head = in.readNBytes(FeedCodec.LENGTH_PREFIX);
        if (head.length < FeedCodec.LENGTH_PREFIX) {
            throw new IOException("feed closed before its challenge");
        }
        int len = FeedCodec.contentLength(head, 0);
        if (len != 1 + FeedAuth.NONCE_BYTES) {
            throw new DecodeException("feed_protocol", "first TCP frame of " + len + " bytes is not a challenge");
        }
        byte[] body = in.readNBytes(len);
        if (body.length < len) {
            throw new IOException("feed closed inside its challenge");
        }
        if (!(FeedCodec.decode(body, 0, len) instanceof FeedFrame.AuthChallenge c)) {
            throw new DecodeException("feed_protocol", "first TCP frame is not a challenge");
        }
        byte[] auth = FeedCodec.encode(new FeedFrame.Auth(FeedAuth.mac(r.secret(), c.nonce())));
        byte[] req = FeedCodec.encode(request);
        byte[] both = new byte[auth.length + req.length];
        System.arraycopy(auth, 0, both, 0, auth.length);
        System.arraycopy(req, 0, both, auth.length, req.length);
        OutputStream out = s.getOutputStream();
        out.write(both);
        out.flush();
        return in;
    }
}
