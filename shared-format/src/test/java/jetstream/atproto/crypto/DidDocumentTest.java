package jetstream.atproto.crypto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.github.luben.zstd.Zstd;
import java.nio.charset.StandardCharsets;
import jetstream.atproto.DecodeException;
import jetstream.testing.Vectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("unit")
class DidDocumentTest {

    static byte[] didDocsJson() {
        byte[] zst = Vectors.bytes("jetstream-corpus/did_docs.json.zst");
        return Zstd.decompress(zst, (int) Zstd.getFrameContentSize(zst));
    }

    @Test
    void parsesEveryCorpusDocument() throws Exception {
        int docs = 0;
        try (JsonParser p = new JsonFactory().createParser(didDocsJson())) {
            assertEquals(JsonToken.START_OBJECT, p.nextToken());
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String did = p.currentName();
                p.nextToken();
                DidDocument doc = DidDocument.read(p);
                assertEquals(did, doc.did());
                assertNotNull(doc.signingKey(), did);
                assertNotNull(doc.handle(), did);
                assertTrue(doc.pdsEndpoint().startsWith("https://"), did);
                docs++;
            }
        }
        assertEquals(148, docs, "corpus documents parsed");
    }

    @Test
    void parsesTheFirstCorpusDocumentExactly() {
        String json = """
            {"@context":["https://www.w3.org/ns/did/v1"],
             "id":"did:plc:2a7ygipkrbh544aqhcav53oy",
             "alsoKnownAs":["https://example.com","at://t045t.zmb.cm"],
             "verificationMethod":[{"id":"did:plc:2a7ygipkrbh544aqhcav53oy#other","type":"Multikey",
                 "publicKeyMultibase":"zDnaembgSGUhZULN2Caob4HLJPaxBh92N7rtH21TErzqf8HQo"},
               {"id":"did:plc:2a7ygipkrbh544aqhcav53oy#atproto","type":"Multikey",
                 "controller":"did:plc:2a7ygipkrbh544aqhcav53oy",
                 "publicKeyMultibase":"zQ3shrc8v5X6ZiANcZxA6JerfT2T4SskeCGxpmtDfMuHF9KRj"}],
             "service":[{"id":"#atproto_labeler","type":"AtprotoLabeler","serviceEndpoint":"https://l.example"},
               {"id":"#atproto_pds","type":"AtprotoPersonalDataServer",
                "serviceEndpoint":"https://elfcup.us-east.host.bsky.network"}]}
            """;
        DidDocument doc = DidDocument.parse(json.getBytes(StandardCharsets.UTF_8));
        assertEquals("did:plc:2a7ygipkrbh544aqhcav53oy", doc.did());
        assertEquals("t045t.zmb.cm", doc.handle());
        assertEquals("did:key:zQ3shrc8v5X6ZiANcZxA6JerfT2T4SskeCGxpmtDfMuHF9KRj", doc.signingKey().didKey());
        assertEquals(KeyCurve.SECP256K1, doc.signingKey().curve());
        assertEquals("https://elfcup.us-east.host.bsky.network", doc.pdsEndpoint());
    }

    @Test
    void legacyKeySuiteAndRelativeIds() {
        String json = """
            {"id":"did:web:example.com","verificationMethod":[{"id":"#atproto",
              "type":"EcdsaSecp256r1VerificationKey2019",
              "publicKeyMultibase":"zxdM8dSstjrpZaRUwBmDvjGXweKuEMVN95A9oJBFjkWMh"}],
             "service":[{"id":"#atproto_pds","serviceEndpoint":{"not":"a string"}}]}
            """;
        DidDocument doc = DidDocument.parse(json.getBytes(StandardCharsets.UTF_8));
        assertEquals("did:key:zDnaembgSGUhZULN2Caob4HLJPaxBh92N7rtH21TErzqf8HQo", doc.signingKey().didKey());
        assertNull(doc.handle());
        assertNull(doc.pdsEndpoint());
    }

    @Test
    void methodOfAnotherDidIsNotTheSigningKey() {
        String json = """
            {"id":"did:plc:aaaa","verificationMethod":[{"id":"did:plc:bbbb#atproto","type":"Multikey",
              "publicKeyMultibase":"zQ3shrc8v5X6ZiANcZxA6JerfT2T4SskeCGxpmtDfMuHF9KRj"}]}
            """;
        assertNull(DidDocument.parse(json.getBytes(StandardCharsets.UTF_8)).signingKey());
    }

    @Test
    void malformedDocumentsThrowDecodeException() {
        for (String bad : new String[] {"", "[]", "{\"id\":", "{\"alsoKnownAs\":[\"at://x\"", "{} {}", "nul",
                "{\"id\":\"did:plc:a\",\"verificationMethod\":[{\"id\":\"#atproto\",\"type\":\"Multikey\","
                        + "\"publicKeyMultibase\":\"zabc\"}]}"}) {
            DecodeException e = assertThrows(DecodeException.class,
                    () -> DidDocument.parse(bad.getBytes(StandardCharsets.UTF_8)), bad);
            assertTrue(e.reason().equals("bad_did_doc") || e.reason().equals("bad_key"), e.reason());
        }
    }
}
