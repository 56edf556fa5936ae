package jetstream.ingester;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import jetstream.config.RootConfigSource;
import jetstream.service.Operations;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The debug listener when JETSTREAM_DEBUG_ADDR is set, and the shared config source in this app. */
@QuarkusTest
@TestProfile(OperationsTest.Debug.class)
@Tag("component")
class OperationsTest {
    public static final class Debug implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("jetstream.debug-addr", "127.0.0.1:0");
        }
    }

    @Inject
    Operations ops;

    private HttpResponse<String> get(String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.debugPort() + path))
                .build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void debugListenerServesProbesMetricsAndDiagnostics() throws Exception {
        assertTrue(ops.debugPort() > 0);
        assertEquals("ok\n", get("/healthz").body());
        HttpResponse<String> ready = get("/readyz");
        assertEquals(200, ready.statusCode(), ready.body());
        assertTrue(get("/metrics").body().contains("jetstream_ingest_next_seq"));
        assertTrue(get("/debug/threads").body().contains("\"debug-listener-"));
        assertEquals(200, get("/debug/heap").statusCode());
    }

    @Test
    void sharedConfigSourceIsRegistered() {
        assertEquals(RootConfigSource.NAME, ConfigProvider.getConfig().getConfigValue("quarkus.shutdown.timeout").getSourceName());
        assertEquals(RootConfigSource.ORDINAL,
                ConfigProvider.getConfig().getConfigValue("quarkus.shutdown.timeout").getSourceOrdinal());
    }
}
