package jetstream.feed;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * TLS for the TCP feed from PEM files, with the JDK alone: the ingester's certificate chain and
 * PKCS#8 key ({@code BEGIN PRIVATE KEY}, RSA or EC), the reader's trusted CA certificates.
 */
public final class FeedTls {
    private static final Pattern BLOCK = Pattern.compile(
            "-----BEGIN ([A-Z ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");
    private static final char[] NO_PASSWORD = new char[0];

    private FeedTls() {}

    /** A server context from a certificate chain PEM and a PKCS#8 private key PEM. */
    public static SSLContext server(Path certPem, Path keyPem) throws IOException, GeneralSecurityException {
        List<Certificate> chain = certificates(certPem);
        PrivateKey key = privateKey(keyPem);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("feed", key, NO_PASSWORD, chain.toArray(new Certificate[0]));
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, NO_PASSWORD);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        return ctx;
    }

    /** A client context trusting only the certificates in {@code caPem}. */
    public static SSLContext client(Path caPem) throws IOException, GeneralSecurityException {
        KeyStore ts = KeyStore.getInstance("PKCS12");
        ts.load(null, null);
        int i = 0;
        for (Certificate c : certificates(caPem)) {
            ts.setCertificateEntry("ca" + i++, c);
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ts);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    private static List<Certificate> certificates(Path pem) throws IOException, GeneralSecurityException {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        List<Certificate> out = new ArrayList<>();
        for (byte[] der : blocks(pem, "CERTIFICATE")) {
            out.add(cf.generateCertificate(new ByteArrayInputStream(der)));
        }
        if (out.isEmpty()) {
            throw new GeneralSecurityException(pem + " holds no PEM CERTIFICATE");
        }
        return out;
    }

    private static PrivateKey privateKey(Path pem) throws IOException, GeneralSecurityException {
        List<byte[]> keys = blocks(pem, "PRIVATE KEY");
        if (keys.size() != 1) {
            throw new GeneralSecurityException(pem + " must hold exactly one PKCS#8 'PRIVATE KEY' block");
        }
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(keys.get(0));
        GeneralSecurityException last = null;
        for (String alg : new String[] {"RSA", "EC", "Ed25519"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw new GeneralSecurityException(pem + ": not an RSA, EC or Ed25519 PKCS#8 key", last);
    }

    private static List<byte[]> blocks(Path pem, String label) throws IOException {
        String text = Files.readString(pem, StandardCharsets.US_ASCII);
        List<byte[]> out = new ArrayList<>();
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            if (m.group(1).equals(label)) {
                out.add(Base64.getMimeDecoder().decode(m.group(2)));
            }
        }
        return out;
    }
}
