package jetstream.ingester.importer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jetstream.service.XrpcHttp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The operator endpoints over real HTTP: every refusal of docs/http-api.md: Timestamp import and a job followed to completion. */
@Tag("unit")
class ImportEndpointsTest {
    static final String TOKEN = "s3cret-operator-token";

    @TempDir
    Path data;

    @TempDir
    Path outside;

    private final Vertx vertx = Vertx.vertx();
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<HttpServer> servers = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    private int serve(String token, ImportHarness h) throws Exception {
        ImportEndpoints e = new ImportEndpoints(token, () -> h == null ? null : h.importer);
        Router r = Router.router(vertx);
        r.route(ImportEndpoints.IMPORT).handler(e::importTimestamps);
        r.route(ImportEndpoints.STATUS).handler(e::getImportStatus);
        HttpServer s = vertx.createHttpServer().requestHandler(r);
        s.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        servers.add(s);
        return s.actualPort();
    }

    private HttpResponse<String> post(int port, String auth, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + ImportEndpoints.IMPORT))
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (auth != null) {
            b.header("Authorization", auth);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(int port, String auth, String query) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + ImportEndpoints.STATUS
                + query));
        if (auth != null) {
            b.header("Authorization", auth);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void assertError(HttpResponse<String> r, int status, String body) {
        assertEquals(status, r.statusCode(), r.body());
        assertEquals("application/json", r.headers().firstValue("Content-Type").orElse(""));
        assertEquals(body, r.body());
    }

    static final String AUTH_FAIL = "{\"error\":\"AuthRequired\",\"message\":\"invalid or missing bearer token\"}";

    @Test
    void withoutATokenEverythingIs401() throws Exception {
        try (ImportHarness h = new ImportHarness(data, 4, 600)) {
            Files.writeString(data.resolve("imports/a.csv"), "uri,timestamp\n");
            for (String token : new String[] {null, ""}) {
                int port = serve(token, h);
                for (String auth : new String[] {null, "Bearer ", "Bearer " + TOKEN, "Bearer null"}) {
                    assertError(post(port, auth, "{\"path\":\"a.csv\"}"), 401, AUTH_FAIL);
                    assertError(get(port, auth, ""), 401, AUTH_FAIL);
                }
            }
        }
    }

    @Test
    void refusalsAndAJobFollowedToTheEnd() throws Exception {
        try (ImportHarness h = new ImportHarness(data, 4, 600)) {
            TimestampImporterTest.fill(h);
            int port = serve(TOKEN, h);
            String ok = "Bearer " + TOKEN;
            for (String bad : new String[] {null, "Bearer wrong", "Basic " + TOKEN, TOKEN, "Bearer " + TOKEN + "x",
                    "Bearer  " + TOKEN}) {
                assertError(post(port, bad, "{\"path\":\"a.csv\"}"), 401, AUTH_FAIL);
                assertError(get(port, bad, "?job=x"), 401, AUTH_FAIL);
            }
            assertError(get(port, "bEaReR " + TOKEN, ""), 404,
                    "{\"error\":\"JobNotFound\",\"message\":\"no import job has run\"}");

            HttpResponse<String> wrongMethod = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + ImportEndpoints.IMPORT)).header("Authorization", ok).build(), HttpResponse.BodyHandlers.ofString());
            assertError(wrongMethod, 405, "{\"error\":\"MethodNotAllowed\",\"message\":\"expected POST\"}");
            HttpResponse<String> wrongMethod2 = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + ImportEndpoints.STATUS)).POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertError(wrongMethod2, 405, "{\"error\":\"MethodNotAllowed\",\"message\":\"expected GET\"}");

            assertError(post(port, ok, ""), 400, "{\"error\":\"InvalidRequest\",\"message\":\"missing request body\"}");
            assertError(post(port, ok, "{\"path\":"), 400, "{\"error\":\"InvalidRequest\",\"message\":\"invalid request body\"}");
            assertError(post(port, ok, "[1]"), 400, "{\"error\":\"InvalidRequest\",\"message\":\"invalid request body\"}");
            assertError(post(port, ok, "{\"path\":7}"), 400, "{\"error\":\"InvalidRequest\",\"message\":\"invalid request body\"}");
            assertEquals(413, post(port, ok, "{\"path\":\"" + "a".repeat(XrpcHttp.BODY_LIMIT) + "\"}").statusCode());

            // path confinement
            Path imports = data.resolve("imports");
            Files.writeString(outside.resolve("x.csv"), "uri,timestamp\n");
            Files.createDirectories(imports.resolve("sub"));
            Files.createSymbolicLink(imports.resolve("escape.csv"), outside.resolve("x.csv"));
            Files.createSymbolicLink(imports.resolve("escdir"), outside);
            assertError(post(port, ok, "{}"), 400, "{\"error\":\"InvalidPath\",\"message\":\"empty path\"}");
            assertError(post(port, ok, "{\"path\":\"\"}"), 400, "{\"error\":\"InvalidPath\",\"message\":\"empty path\"}");
            String escapes = "{\"error\":\"InvalidPath\",\"message\":\"path escapes the import directory\"}";
            String viaLink = "{\"error\":\"InvalidPath\",\"message\":\"path escapes the import directory through a symlink\"}";
            String rel = imports.relativize(outside.resolve("x.csv")).toString();
            assertError(post(port, ok, "{\"path\":\"" + rel + "\"}"), 400, escapes);
            assertError(post(port, ok, "{\"path\":\"sub/../../x.csv\"}"), 400, escapes);
            assertError(post(port, ok, "{\"path\":\"" + outside.resolve("x.csv") + "\"}"), 400, escapes);
            assertError(post(port, ok, "{\"path\":\"escape.csv\"}"), 400, viaLink);
            assertError(post(port, ok, "{\"path\":\"escdir/x.csv\"}"), 400, viaLink);
            assertError(post(port, ok, "{\"path\":\"sub\"}"), 400, "{\"error\":\"InvalidPath\",\"message\":\"not a regular file: sub\"}");
            assertError(post(port, ok, "{\"path\":\"missing.csv\"}"), 400,
                    "{\"error\":\"InvalidPath\",\"message\":\"file not found: missing.csv\"}");
            assertError(post(port, ok, "{\"path\":\"bad\\u0000name\"}"), 400, "{\"error\":\"InvalidPath\",\"message\":\"invalid path\"}");

            // inside the directory, through .. or a symlink that stays inside, is accepted
            Files.writeString(imports.resolve("sub/ts.csv"), TimestampImporterTest.csv());
            Files.createSymbolicLink(imports.resolve("inside.csv"), imports.resolve("sub/ts.csv"));
            assertEquals(imports.resolve("sub/ts.csv").toRealPath(), h.importer.confine("inside.csv"));
            assertEquals(imports.resolve("sub/ts.csv").toRealPath(), h.importer.confine("sub/../sub/ts.csv"));
            assertEquals(imports.resolve("sub/ts.csv").toRealPath(), h.importer.confine(imports.resolve("sub/ts.csv").toString()));

            h.ready.set(false);
            assertError(post(port, ok, "{\"path\":\"sub/ts.csv\"}"), 503, "{\"error\":\"ImportNotReady\",\"message\":"
                    + "\"imports need the server in steady state with its live writer running\"}");
            h.ready.set(true);

            // one job at a time: the test holds the rewrite lock, so the job cannot get past bucketing
            String id;
            h.rewriteLock.lock();
            try {
                HttpResponse<String> r = post(port, ok, "{\"path\":\"sub/ts.csv\"}");
                assertEquals(200, r.statusCode(), r.body());
                Matcher m = Pattern.compile("\\{\"job\":\"([^\"]+)\"}").matcher(r.body());
                assertTrue(m.matches(), r.body());
                id = m.group(1);
                assertError(post(port, ok, "{\"path\":\"sub/ts.csv\"}"), 409,
                        "{\"error\":\"ImportInProgress\",\"message\":\"import job " + id + " is still running\"}");
                HttpResponse<String> running = get(port, ok, "");
                assertEquals(200, running.statusCode());
                assertTrue(running.body().contains("\"state\":\"running\""), running.body());
                assertTrue(running.body().contains("\"phase\":\"parse_bucket\""), running.body());
            } finally {
                h.rewriteLock.unlock();
            }
            h.await(id);
            HttpResponse<String> done = get(port, ok, "?job=" + id);
            assertEquals(200, done.statusCode());
            assertEquals("application/json", done.headers().firstValue("Content-Type").orElse(""));
            List<String> keys = new ArrayList<>();
            Matcher k = Pattern.compile("\"(\\w+)\":").matcher(done.body());
            while (k.find()) {
                keys.add(k.group(1));
            }
            assertEquals(List.of("bucketed", "finishedAt", "job", "rowsCorruptOffset", "rowsMatchedAllVersions",
                    "rowsMatchedSpecific", "rowsMutated", "rowsRejected", "rowsTotal", "rowsValid", "segmentsApplied",
                    "segmentsExamined", "segmentsPatched", "segmentsToApply", "specificCidsUnmatched", "state",
                    "submittedAt"), keys, done.body());
            assertTrue(done.body().matches(".*\"finishedAt\":\"\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z\".*"
                    + "\"rowsMutated\":5,.*\"state\":\"complete\",.*"), done.body());
            assertEquals(done.body(), get(port, ok, "").body(), "no id: the most recent job");
            assertError(get(port, ok, "?job=nope"), 404, "{\"error\":\"JobNotFound\",\"message\":\"job not found\"}");
        }
    }
}
