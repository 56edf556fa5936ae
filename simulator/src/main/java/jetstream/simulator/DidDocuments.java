package jetstream.simulator;

import java.io.IOException;
import jetstream.atproto.crypto.KeyCurve;
import jetstream.atproto.crypto.PrivateKey;

/**
 * The identity side of the network: the PLC directory ({@code GET /<did>}) and the did:web
 * documents ({@code /did-web/<host>/.well-known/did.json}), with the PLC and did:web fault knobs of
 * {@link Faults}.
 */
final class DidDocuments {
    /** The key a did:web document names under {@link Faults#didWebWrongKey}: no account signs with it. */
    private static final PrivateKey WRONG_KEY = PrivateKey.fromBytes(KeyCurve.SECP256K1, filled(32, (byte) 0x17));

    /** Where the did:web documents are served: {@code /did-web/<host>/.well-known/did.json}. */
    static final String DID_WEB_PREFIX = "/did-web/";
    private static final String DID_WEB_SUFFIX = "/.well-known/did.json";

    private final SimConfig cfg;
    private final World world;

    DidDocuments(SimConfig cfg, World world) {
        this.cfg = cfg;
        this.world = world;
    }

    private static byte[] filled(int n, byte b) {
        byte[] out = new byte[n];
        java.util.Arrays.fill(out, b);
        return out;
    }

    /** Answers a did:web document request; false when {@code path} is not one. */
    boolean didWeb(Exchange ex, String path) throws IOException {
        if (!path.startsWith(DID_WEB_PREFIX) || !path.endsWith(DID_WEB_SUFFIX)) {
            return false;
        }
        String did = "did:web:" + path.substring(DID_WEB_PREFIX.length(), path.length() - DID_WEB_SUFFIX.length());
        Account a = world.account(did);
        if (a == null) {
            ex.send(404, "application/json", Json.error("NotFound", "no did:web document here for " + did));
        } else {
            didDocument(ex, a, did);
        }
        return true;
    }

    void plc(Exchange ex, String did) throws IOException {
        Faults f = cfg.faults;
        if (f.plcSlowMillis > 0) {
            try {
                Thread.sleep(f.plcSlowMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ex.abort();
                return;
            }
        }
        if (f.plcDown) {
            ex.send(503, "application/json", Json.error("InternalServerError", "injected PLC outage"));
            return;
        }
        Account a = did.startsWith("did:web:") ? null : world.account(did);
        if (a == null) {
            ex.send(404, "application/json", Json.object(g -> g.writeStringField("message", "DID not registered: " + did)));
            return;
        }
        didDocument(ex, a, did);
    }

    private void didDocument(Exchange ex, Account a, String did) throws IOException {
        String handle = world.handle(a);
        String endpoint = "https://" + world.hostnames()[a.host];
        String multikey = (cfg.faults.didWebWrongKey && did.startsWith("did:web:") ? WRONG_KEY : a.key()).publicKey().multikey();
        ex.send(200, "application/did+ld+json", Json.object(g -> {
            g.writeArrayFieldStart("@context");
            g.writeString("https://www.w3.org/ns/did/v1");
            g.writeString("https://w3id.org/security/multikey/v1");
            g.writeString("https://w3id.org/security/suites/secp256k1-2019/v1");
            g.writeEndArray();
            g.writeStringField("id", did);
            g.writeArrayFieldStart("alsoKnownAs");
            g.writeString("at://" + handle);
            g.writeEndArray();
            g.writeArrayFieldStart("verificationMethod");
            g.writeStartObject();
            g.writeStringField("id", did + "#atproto");
            g.writeStringField("type", "Multikey");
            g.writeStringField("controller", did);
            g.writeStringField("publicKeyMultibase", multikey);
            g.writeEndObject();
            g.writeEndArray();
            g.writeArrayFieldStart("service");
            g.writeStartObject();
            g.writeStringField("id", "#atproto_pds");
            g.writeStringField("type", "AtprotoPersonalDataServer");
            g.writeStringField("serviceEndpoint", endpoint);
            g.writeEndObject();
            g.writeEndArray();
        }));
    }
}
