package jetstream.archive;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** A small client over real HTTP for the contract tests. */
final class Http {
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private final URL base;

    Http(URL base) {
        this.base = base;
    }

    URI uri(String path) {
        return URI.create(base.toString().replaceAll("/$", "") + path);
    }

    HttpResponse<byte[]> send(String method, String path, byte[] body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        try {
            return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    HttpResponse<byte[]> get(String path, String... headers) {
        return send("GET", path, null, headers);
    }

    HttpResponse<byte[]> head(String path, String... headers) {
        return send("HEAD", path, null, headers);
    }

    HttpResponse<byte[]> post(String path, String json) {
        return send("POST", path, json.getBytes(StandardCharsets.UTF_8), "Content-Type", "application/json");
    }

    static String text(HttpResponse<byte[]> r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    static String header(HttpResponse<byte[]> r, String name) {
        return r.headers().firstValue(name).orElse(null);
    }
}
