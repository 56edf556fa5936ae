package jetstream.ingester.feed;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Base64;
import java.util.concurrent.TimeUnit;

/** Test PKI: a self-signed EC certificate for localhost/127.0.0.1 from the JDK's keytool, written as PEM. */
record SelfSignedPem(Path cert, Path key) {

    static SelfSignedPem create(Path dir) throws Exception {
        Path store = dir.resolve("feed.p12");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "feed", "-keyalg", "EC", "-groupname", "secp256r1",
                "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2",
                "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass", "changeit", "-keypass", "changeit")
                .redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool failed: " + new String(out, StandardCharsets.UTF_8));
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, "changeit".toCharArray());
        }
        Path cert = dir.resolve("feed.crt");
        Path key = dir.resolve("feed.key");
        Files.writeString(cert, pem("CERTIFICATE", ks.getCertificate("feed").getEncoded()));
        Files.writeString(key, pem("PRIVATE KEY", ks.getKey("feed", "changeit".toCharArray()).getEncoded()));
        return new SelfSignedPem(cert, key);
    }

    private static String pem(String label, byte[] der) {
        return "-----BEGIN " + label + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + label + "-----\n";
    }
}
