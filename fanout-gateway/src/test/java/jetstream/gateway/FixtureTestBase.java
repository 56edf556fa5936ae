package jetstream.gateway;

import io.quarkus.test.common.http.TestHTTPResource;
import io.vertx.core.Vertx;
import jakarta.inject.Inject;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Base of the in-process gateway tests over {@link Fixture}: the running gateway with the fixture's
 * archive and ring installed before each test, its base URL, and the WebSockets a test opens
 * (closed after each test).
 */
abstract class FixtureTestBase {
    @TestHTTPResource("/")
    URI base;
    @Inject
    Gateway gateway;
    @Inject
    Vertx vertx;

    /** The test's open connections; thread-safe, as some tests open them from several threads. */
    final List<Ws> open = Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void installFixture() {
        Fixture.install(gateway);
    }

    @AfterEach
    void closeConnections() {
        synchronized (open) {
            open.forEach(Ws::close);
            open.clear();
        }
    }
}
