package jetstream.ingester.backfill;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import jetstream.ingester.net.KeepAliveHttp;
import jetstream.ingester.net.Outbound;

/**
 * The three sync calls the backfill makes ({@code listHosts}, {@code listRepos}, {@code getRepo}),
 * with every answer classified for the retry and parking policy. Upstream JSON is untrusted: an
 * unparseable page is a {@link Outcome#BAD_RESPONSE}, never an exception. Requests go through
 * {@link Outbound}: a deadline over the whole exchange and a cap on every body; redirects are
 * followed by hand, each target checked and never from https down to http.
 */
final class SyncCalls {
    static final JsonFactory JSON = new JsonFactory();
    /** Bound on a listHosts/listRepos page body (1000 entries of ~200 bytes, with room to spare). */
    static final int MAX_PAGE_BYTES = 8 << 20;
    /** Bound on one repository CAR held in memory. */
    /** Longest a rate-limit park honours {@code ratelimit-reset}: a hostile value must not stall a host for days. */
    static final Duration MAX_RATE_LIMIT_PARK = Duration.ofMinutes(5);

    enum Outcome {
        OK,
        /** 429: park the host until the reset time; not the repo's or host's fault. */
        RATE_LIMITED,
        /** The host cannot be reached at all (refused, unresolved, connect timeout). */
        HOST_UNREACHABLE,
        /** The repo exists but cannot be fetched: terminal ({@code unavailable}). */
        REPO_UNAVAILABLE,
        /** The method is not implemented (a PDS asked for listHosts). */
        NOT_IMPLEMENTED,
        /** Anything else: 5xx, other 4xx, I/O error mid-body, bad JSON or CAR. Worth one retry. */
        BAD_RESPONSE
    }

    /**
     * A classified answer; {@code body} only for OK; {@code retryAfterMillis} for RATE_LIMITED. An
     * OK getRepo through a {@link CarSpool} has either {@code body} (its length held from the
     * spool's budget) or {@code spooled}, the file holding it.
     */
    record Answer(Outcome outcome, byte[] body, String error, long retryAfterMillis, Path spooled) {
        Answer(Outcome outcome, byte[] body, String error, long retryAfterMillis) {
            this(outcome, body, error, retryAfterMillis, null);
        }

        static Answer of(Outcome o, String error) {
            return new Answer(o, null, error, 0);
        }
    }

    record Host(String hostname, String status, long accountCount, long seq) {}

    record HostPage(List<Host> hosts, String cursor) {}

    record Repo(String did, boolean active, String status, String rev) {}

    record RepoPage(List<Repo> repos, String cursor) {}

    /** Redirects followed by hand, each target checked (a relay may redirect getRepo to the PDS). */
    static final int MAX_REDIRECTS = 3;

    private final Outbound.Transport transport;
    private final long maxCarBytes;
    private final Duration pageTimeout;
    private final Duration repoTimeout;
    private final java.util.function.Predicate<URI> redirectAllowed;
    /** Where getRepo bodies go (budget, spool files); null: held in heap, bounded only by the CAR cap. */
    private final CarSpool spool;

    /**
     * @param redirectAllowed whether a redirect target may be dialled; a client that follows
     *     redirects itself is replaced by one that does not, so no target escapes this check
     */
    SyncCalls(HttpClient http, Duration pageTimeout, Duration repoTimeout, java.util.function.Predicate<URI> redirectAllowed) {
        this(http, pageTimeout, repoTimeout, redirectAllowed, null);
    }

    SyncCalls(HttpClient http, Duration pageTimeout, Duration repoTimeout, java.util.function.Predicate<URI> redirectAllowed,
         CarSpool spool) {
        this(http, pageTimeout, repoTimeout, redirectAllowed, spool, null, Outbound.DEFAULT_MAX_CAR_BYTES);
    }

    /**
     * @param transport sends each request (e.g. pinned to the checked address); null: {@code http}
     * @param maxCarBytes cap on one getRepo body ({@code JETSTREAM_MAX_CAR_BYTES})
     */
    SyncCalls(HttpClient http, Duration pageTimeout, Duration repoTimeout, java.util.function.Predicate<URI> redirectAllowed,
         CarSpool spool, Outbound.Transport transport, long maxCarBytes) {
        HttpClient client = http.followRedirects() == HttpClient.Redirect.NEVER ? http : ownClient(http);
        this.transport = transport != null ? transport : (uri, deadline, max) -> Outbound.open(client, uri, deadline, max);
        this.maxCarBytes = maxCarBytes;
        this.pageTimeout = pageTimeout;
        this.repoTimeout = repoTimeout;
        this.redirectAllowed = redirectAllowed;
        this.spool = spool;
    }

    /**
     * The client the calls go through: {@code http}'s version and connect timeout, no redirects
     * followed. Over HTTP/1.1 its dependent tasks (response parsing, body delivery) run on the thread
     * that completes them, the selector's or the caller's: the default executor hands each step of
     * every exchange to a pool thread. Nothing blocks there: the body subscriber only queues chunks
     * for the reading thread ({@link Outbound}).
     */
    private static HttpClient ownClient(HttpClient http) {
        HttpClient.Builder b = HttpClient.newBuilder().version(http.version())
                .connectTimeout(http.connectTimeout().orElse(Duration.ofSeconds(10)))
                .followRedirects(HttpClient.Redirect.NEVER);
        if (http.version() == HttpClient.Version.HTTP_1_1) {
            b.executor(Runnable::run);
        }
        return b.build();
    }

    /**
     * The bootstrap's transport for an HTTP/1.1 client: {@link KeepAliveHttp}, blocking sockets kept
     * per host (the JDK client's asynchronous exchange cost about as much CPU per getRepo as
     * verifying the CAR, BENCHMARKS.md "CPU per record"), with the client's connect timeout; null
     * (the client itself) for any other version.
     */
    static Outbound.Transport keepAlive(HttpClient http) {
        return http.version() == HttpClient.Version.HTTP_1_1
                ? new KeepAliveHttp(http.connectTimeout().orElse(Duration.ofSeconds(10))) : null;
    }

    Answer listHosts(String base, String cursor) throws InterruptedException {
        return get(base, "com.atproto.sync.listHosts?limit=1000" + cursorParam(cursor), pageTimeout, MAX_PAGE_BYTES);
    }

    Answer listRepos(String base, String cursor, int limit) throws InterruptedException {
        return get(base, "com.atproto.sync.listRepos?limit=" + limit + cursorParam(cursor), pageTimeout, MAX_PAGE_BYTES);
    }

    Answer getRepo(String base, String did) throws InterruptedException {
        return get(base, "com.atproto.sync.getRepo?did=" + URLEncoder.encode(did, StandardCharsets.UTF_8), repoTimeout,
                maxCarBytes, spool);
    }

    private static String cursorParam(String cursor) {
        return cursor == null || cursor.isEmpty() ? "" : "&cursor=" + URLEncoder.encode(cursor, StandardCharsets.UTF_8);
    }

    private Answer get(String base, String pathAndQuery, Duration timeout, long maxBytes) throws InterruptedException {
        return get(base, pathAndQuery, timeout, maxBytes, null);
    }

    private Answer get(String base, String pathAndQuery, Duration timeout, long maxBytes, CarSpool carSpool)
            throws InterruptedException {
        String b = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        URI uri;
        try {
            uri = URI.create(b + "/xrpc/" + pathAndQuery);
        } catch (IllegalArgumentException e) {
            return Answer.of(Outcome.HOST_UNREACHABLE, "bad_url");
        }
        for (int hop = 0; ; hop++) {
            Object r = send(uri, timeout, maxBytes, carSpool);
            if (r instanceof Answer a) {
                return a;
            }
            URI next = (URI) r;
            if (hop >= MAX_REDIRECTS || next.getHost() == null
                    || !("https".equals(next.getScheme()) || "http".equals(next.getScheme())) || !redirectAllowed.test(next)) {
                return Answer.of(Outcome.BAD_RESPONSE, "redirect_refused");
            }
            uri = next;
        }
    }

    /** The classified answer, or the URI a redirect points to. */
    private Object send(URI uri, Duration timeout, long maxBytes, CarSpool carSpool) throws InterruptedException {
        Outbound.Response resp;
        byte[] body;
        try {
            resp = transport.open(uri, timeout, maxBytes);
        } catch (ConnectException | HttpConnectTimeoutException | UnresolvedAddressException e) {
            return Answer.of(Outcome.HOST_UNREACHABLE, "connect: " + e.getClass().getSimpleName());
        } catch (Outbound.Failure e) {
            if (e.getCause() instanceof ConnectException || e.getCause() instanceof UnresolvedAddressException) {
                return Answer.of(Outcome.HOST_UNREACHABLE, "connect: " + e.getCause().getClass().getSimpleName());
            }
            return Answer.of(Outcome.BAD_RESPONSE, e.reason());
        } catch (IOException e) {
            if (e.getCause() instanceof ConnectException || e.getCause() instanceof UnresolvedAddressException) {
                return Answer.of(Outcome.HOST_UNREACHABLE, "connect: " + e.getCause().getClass().getSimpleName());
            }
            return Answer.of(Outcome.BAD_RESPONSE, "io: " + e.getClass().getSimpleName());
        }
        int status = resp.status();
        try (resp) {
            if (carSpool != null && status == 200) {
                long declared = resp.headers().firstValueAsLong("content-length").orElse(-1);
                Object got = carSpool.read(resp.body(), declared, maxBytes);
                if (got instanceof Path file) {
                    return new Answer(Outcome.OK, null, null, 0, file);
                }
                body = (byte[]) got;
            } else {
                body = resp.readAll();
            }
        } catch (Outbound.Failure e) {
            return Answer.of(Outcome.BAD_RESPONSE, e.reason());
        } catch (IOException e) {
            return Answer.of(Outcome.BAD_RESPONSE, "io: " + e.getClass().getSimpleName());
        }
        if (body == null) {
            return Answer.of(Outcome.BAD_RESPONSE, "body_too_large");
        }
        if (status >= 301 && status <= 308 && status != 304 && status != 305 && status != 306) {
            URI next = Outbound.location(uri, status, resp.headers());
            if (next == null) {
                return Answer.of(Outcome.BAD_RESPONSE, "http " + status + " without a usable location");
            }
            return Outbound.schemeAllowed(uri, next) ? next : Answer.of(Outcome.BAD_RESPONSE, "redirect_refused");
        }
        if (status == 200) {
            return new Answer(Outcome.OK, body, null, 0);
        }
        String error = errorName(body);
        if (status == 429) {
            return new Answer(Outcome.RATE_LIMITED, null, "RateLimitExceeded", retryAfter(resp));
        }
        if ("MethodNotImplemented".equals(error) || status == 501) {
            return Answer.of(Outcome.NOT_IMPLEMENTED, "MethodNotImplemented");
        }
        if (status == 400 || status == 404) {
            if (error != null && switch (error) {
                case "RepoNotFound", "RepoDeactivated", "RepoTakendown", "RepoSuspended" -> true;
                default -> false;
            }) {
                return Answer.of(Outcome.REPO_UNAVAILABLE, error);
            }
        }
        return Answer.of(Outcome.BAD_RESPONSE, "http " + status + (error == null ? "" : " " + error));
    }

    /** Milliseconds until {@code ratelimit-reset} (epoch seconds) or {@code retry-after}, capped; 1 s when absent. */
    private static long retryAfter(Outbound.Response resp) {
        long now = System.currentTimeMillis();
        long wait = 1000;
        var reset = resp.headers().firstValue("ratelimit-reset");
        var retry = resp.headers().firstValue("retry-after");
        try {
            if (reset.isPresent()) {
                wait = Long.parseLong(reset.get().trim()) * 1000 - now;
            } else if (retry.isPresent()) {
                wait = Long.parseLong(retry.get().trim()) * 1000;
            }
        } catch (NumberFormatException e) {
            wait = 1000;
        }
        return Math.max(100, Math.min(wait, MAX_RATE_LIMIT_PARK.toMillis()));
    }

    /** The {@code error} of an XRPC error envelope, or null. */
    static String errorName(byte[] body) {
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                if (name.equals("error") && t == JsonToken.VALUE_STRING) {
                    String e = p.getText();
                    return e.length() > 64 ? e.substring(0, 64) : e;
                }
                p.skipChildren();
            }
        } catch (IOException e) {
            return null;
        }
        return null;
    }

    /** {@code {cursor?, hosts:[{hostname, seq, accountCount, status}]}}; null when malformed. */
    static HostPage parseHosts(byte[] body) {
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            String cursor = null;
            List<Host> hosts = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                if (name.equals("cursor") && t == JsonToken.VALUE_STRING) {
                    cursor = p.getText();
                } else if (name.equals("hosts") && t == JsonToken.START_ARRAY) {
                    hosts = new ArrayList<>();
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        String hostname = null;
                        String status = "";
                        long count = 0;
                        long seq = 0;
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String f = p.currentName();
                            JsonToken v = p.nextToken();
                            if (f.equals("hostname") && v == JsonToken.VALUE_STRING) {
                                hostname = p.getText();
                            } else if (f.equals("status") && v == JsonToken.VALUE_STRING) {
                                status = p.getText();
                            } else if (f.equals("accountCount") && v == JsonToken.VALUE_NUMBER_INT) {
                                count = p.getLongValue();
                            } else if (f.equals("seq") && v == JsonToken.VALUE_NUMBER_INT) {
                                seq = p.getLongValue();
                            } else {
                                p.skipChildren();
                            }
                        }
                        hosts.add(new Host(hostname, status, count, seq));
                    }
                } else {
                    p.skipChildren();
                }
            }
            return hosts == null ? null : new HostPage(hosts, cursor);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** {@code {cursor?, repos:[{did, head, rev, active, status?}]}}; null when malformed. */
    static RepoPage parseRepos(byte[] body) {
        try (JsonParser p = JSON.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            String cursor = null;
            List<Repo> repos = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken t = p.nextToken();
                if (name.equals("cursor") && t == JsonToken.VALUE_STRING) {
                    cursor = p.getText();
                } else if (name.equals("repos") && t == JsonToken.START_ARRAY) {
                    repos = new ArrayList<>();
                    while (p.nextToken() == JsonToken.START_OBJECT) {
                        String did = null;
                        boolean active = true;
                        String status = "";
                        String rev = "";
                        while (p.nextToken() == JsonToken.FIELD_NAME) {
                            String f = p.currentName();
                            JsonToken v = p.nextToken();
                            if (f.equals("did") && v == JsonToken.VALUE_STRING) {
                                did = p.getText();
                            } else if (f.equals("active") && (v == JsonToken.VALUE_TRUE || v == JsonToken.VALUE_FALSE)) {
                                active = v == JsonToken.VALUE_TRUE;
                            } else if (f.equals("status") && v == JsonToken.VALUE_STRING) {
                                status = p.getText();
                            } else if (f.equals("rev") && v == JsonToken.VALUE_STRING) {
                                rev = p.getText();
                            } else {
                                p.skipChildren();
                            }
                        }
                        repos.add(new Repo(did, active, status, rev));
                    }
                } else {
                    p.skipChildren();
                }
            }
            return repos == null ? null : new RepoPage(repos, cursor);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
