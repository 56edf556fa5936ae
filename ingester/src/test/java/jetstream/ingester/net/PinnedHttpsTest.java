package jetstream.ingester.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.File;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SNIServerName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import jetstream.ingester.backfill.HostnamePolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PinnedHttp} over TLS, against a local HTTPS server with a self-signed certificate made by
 * {@code keytool} and trusted through a test trust store: the socket goes to the checked loopback
 * address while the name travels only in SNI, the certificate check and the Host header; a server
 * whose certificate names another host is refused before any request is sent. {@link KeepAliveHttp}
 * checks the name the same way and keeps its TLS connection for the next request.
 */
@Tag("unit")
class PinnedHttpsTest {
    private static final String NAME = "pds.example.org";
    private static final char[] PASSWORD = "changeit".toCharArray();

    @TempDir
    Path dir;

    private HttpsServer server;
    private final List<String> hosts = new CopyOnWriteArrayList<>();
    private final List<String> sni = new CopyOnWriteArrayList<>();
    private final Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    /** A PKCS#12 key store holding a fresh self-signed P-256 certificate for {@code dnsName}. */
    private KeyStore certificateFor(String dnsName) throws Exception {
        Path store = dir.resolve(dnsName + ".p12");
        String keytool = System.getProperty("java.home") + File.separator + "bin" + File.separator + "keytool";
        Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=" + dnsName, "-ext", "SAN=dns:" + dnsName, "-validity", "2", "-storetype", "PKCS12",
                "-keystore", store.toString(), "-storepass", new String(PASSWORD), "-keypass", new String(PASSWORD))
                .redirectErrorStream(true).start();
        byte[] out;
        try (InputStream in = p.getInputStream()) {
            out = in.readAllBytes();
        }
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "keytool finished");
        assertEquals(0, p.exitValue(), () -> "keytool: " + new String(out));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, PASSWORD);
        }
        return ks;
    }

    /** Starts an HTTPS server on loopback presenting {@code keys}, recording each request's Host header and SNI. */
    private int serve(KeyStore keys) throws Exception {
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, PASSWORD);
        X509ExtendedKeyManager real = (X509ExtendedKeyManager) kmf.getKeyManagers()[0];
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(new javax.net.ssl.KeyManager[] {new RecordingSni(real)}, null, null);
        server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(ctx));
        server.createContext("/", ex -> {
            hosts.add(ex.getRequestHeaders().getFirst("Host"));
            clientPorts.add(ex.getRemoteAddress().getPort());
            byte[] b = "over tls".getBytes();
            ex.sendResponseHeaders(200, b.length);
            ex.getResponseBody().write(b);
            ex.close();
        });
        server.start();
        return server.getAddress().getPort();
    }

    /** A client trusting exactly the certificate in {@code keys}, resolving every name to loopback. */
    private static PinnedHttp client(KeyStore keys) throws Exception {
        PinnedHttp.Resolver loopback = host -> new InetAddress[] {InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1})};
        return new PinnedHttp(new HostnamePolicy(true), loopback, trusting(keys));
    }

    private static SSLSocketFactory trusting(KeyStore keys) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("server", keys.getCertificate("server"));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx.getSocketFactory();
    }

    @Test
    void keepAliveHttpChecksTheNameAndReusesItsTlsConnection() throws Exception {
        KeyStore keys = certificateFor("localhost");
        int port = serve(keys);
        KeepAliveHttp http = new KeepAliveHttp(Duration.ofSeconds(10), trusting(keys));
        for (int i = 0; i < 3; i++) {
            try (Outbound.Response r = http.open(URI.create("https://localhost:" + port + "/xrpc/x"), Duration.ofSeconds(20), 1000)) {
                assertEquals(200, r.status());
                assertEquals("over tls", new String(r.body().readAllBytes()));
            }
        }
        assertEquals(1, clientPorts.size(), "TLS connections for 3 requests: " + clientPorts);
        assertEquals(List.of("localhost"), sni);
        KeepAliveHttp wrongName = new KeepAliveHttp(Duration.ofSeconds(10), trusting(certificateFor("other.example.org")));
        assertThrows(javax.net.ssl.SSLHandshakeException.class,
                () -> wrongName.open(URI.create("https://localhost:" + port + "/xrpc/x"), Duration.ofSeconds(20), 1000));
    }

    @Test
    void theNameTravelsInSniTheCertificateCheckAndTheHostHeaderOnly() throws Exception {
        KeyStore keys = certificateFor(NAME);
        int port = serve(keys);
        Outbound.Buffered r = client(keys).get(URI.create("https://" + NAME + ":" + port + "/xrpc/x"), Duration.ofSeconds(20), 1000);
        assertEquals(200, r.status(), "error " + r.error());
        assertEquals("over tls", new String(r.body()));
        assertEquals(List.of(NAME + ":" + port), hosts);
        assertEquals(List.of(NAME), sni, "SNI carries the name, not the dialled address");
    }

    @Test
    void aCertificateForAnotherNameIsRefusedBeforeAnyRequest() throws Exception {
        KeyStore other = certificateFor("other.example.org");
        int port = serve(other);
        // the client trusts this very certificate: only the name check can refuse it
        Outbound.Buffered r = client(other).get(URI.create("https://" + NAME + ":" + port + "/xrpc/x"), Duration.ofSeconds(20), 1000);
        assertTrue(r.failed(), "a certificate for other.example.org does not authenticate " + NAME);
        assertEquals(Outbound.IO, r.error());
        assertEquals(List.of(), hosts, "no request reached the server");
        assertEquals(List.of(NAME), sni, "the handshake was attempted for the name");
    }

    /** Delegates to the real key manager, recording the server names the client asked for. */
    private final class RecordingSni extends X509ExtendedKeyManager {
        private final X509ExtendedKeyManager real;

        RecordingSni(X509ExtendedKeyManager real) {
            this.real = real;
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            if (engine.getHandshakeSession() instanceof ExtendedSSLSession s) {
                for (SNIServerName n : s.getRequestedServerNames()) {
                    if (n instanceof SNIHostName h && !sni.contains(h.getAsciiName())) {
                        sni.add(h.getAsciiName());
                    }
                }
            }
            return real.chooseEngineServerAlias(keyType, issuers, engine);
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return real.getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return real.chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return real.getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return real.chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return real.getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return real.getPrivateKey(alias);
        }
    }
}
