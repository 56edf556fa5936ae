package jetstream.ingester.net;

import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import javax.net.ssl.SSLSocketFactory;
import jetstream.ingester.backfill.HostnamePolicy;

/**
 * A GET to a host named by an untrusted party (a DID document's PDS or did:web host, a redirect),
 * dialled at the address that was checked: the name is resolved once, every address must pass the
 * {@link HostnamePolicy}, and the socket connects to a checked {@link InetAddress} with the name only
 * in the {@code Host} header and, over TLS, in SNI and the certificate check. The JDK client would
 * resolve the name again when connecting, so a DNS answer that changes between the check and the
 * connection (rebinding to loopback or a private range) would reach an internal service.
 *
 * <p>HTTP/1.1, one request per connection ({@code Connection: close}), no redirects followed (the
 * caller checks each hop and opens it here again). The exchange has the deadline of
 * {@link Outbound#open} (connect, headers and every byte of the body) and the body its byte cap;
 * failures are the same {@link Outbound.Failure} names, plus {@link #REFUSED}.
 */
public final class PinnedHttp {
    /** Failure name: the host or an address it resolved to is not public. */
    public static final String REFUSED = "host_refused";

    /** Name resolution: the JDK's resolver in production, a stub in tests. */
    @FunctionalInterface
    public interface Resolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    private final HostnamePolicy policy;
    private final Resolver resolver;
    private final SSLSocketFactory tls;

    public PinnedHttp(HostnamePolicy policy) {
        this(policy, InetAddress::getAllByName, (SSLSocketFactory) SSLSocketFactory.getDefault());
    }

    PinnedHttp(HostnamePolicy policy, Resolver resolver, SSLSocketFactory tls) {
        this.policy = policy;
        this.resolver = resolver;
        this.tls = tls;
    }

    /** {@link #open} with the body read whole; failures are returned, not thrown. */
    public Outbound.Buffered get(URI uri, Duration deadline, long maxBytes) {
        try (Outbound.Response r = open(uri, deadline, maxBytes)) {
            return new Outbound.Buffered(r.status(), r.headers(), r.readAll(), null);
        } catch (Outbound.Failure e) {
            return new Outbound.Buffered(-1, null, null, e.reason());
        } catch (IOException e) {
            return new Outbound.Buffered(-1, null, null, Outbound.IO);
        }
    }

    /** Sends the GET to a checked address of the URI's host and returns once its headers are read. */
    public Outbound.Response open(URI uri, Duration deadline, long maxBytes) throws IOException {
        long end = System.nanoTime() + deadline.toNanos();
        boolean https = "https".equalsIgnoreCase(uri.getScheme());
        if (!https && !"http".equalsIgnoreCase(uri.getScheme()) || uri.getHost() == null) {
            throw new Outbound.Failure(REFUSED, null);
        }
        HostnamePolicy.Verdict v = policy.check(uri.getHost());
        if (!v.accepted()) {
            throw new Outbound.Failure(REFUSED, null);
        }
        InetAddress[] addresses;
        try {
            addresses = resolver.resolve(v.hostname());
        } catch (UnknownHostException e) {
            throw new Outbound.Failure(Outbound.IO, new ConnectException("cannot resolve " + v.hostname()));
        }
        if (addresses.length == 0 || policy.checkAddresses(addresses) != null) {
            throw new Outbound.Failure(REFUSED, null);
        }
        int port = uri.getPort() >= 0 ? uri.getPort() : https ? 443 : 80;
        Socket socket = Http1.connect(Socket::new, addresses, port, end);
        try {
            if (https) {
                socket = Http1.handshake(tls, socket, v.hostname(), port, end);
            }
            Http1.request(socket.getOutputStream(), uri, uri.getPort() >= 0 ? v.hostname() + ":" + port : v.hostname(), true);
            InputStream in = new Http1.DeadlineInput(socket, end);
            Http1.Head head = Http1.head(in);
            long declared = head.headers().firstValueAsLong("content-length").orElse(-1);
            if (declared > maxBytes) {
                throw new Outbound.Failure(Outbound.TOO_LARGE, null);
            }
            boolean chunked = Http1.chunked(head.headers());
            Socket s = socket;
            InputStream body = new Http1.CappedBody(chunked ? new Http1.ChunkedInput(in) : in, chunked ? -1 : declared, maxBytes,
                    complete -> s.close());
            return new Outbound.Response(head.status(), head.headers(), body);
        } catch (SocketTimeoutException e) {
            socket.close();
            throw new Outbound.Failure(Outbound.DEADLINE, e);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }
}
