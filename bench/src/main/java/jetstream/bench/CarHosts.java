package jetstream.bench;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.stream.Stream;

/**
 * A relay and its PDS hosts serving prebuilt repository CARs from memory, run as a child process of
 * {@link BootstrapHttpBench} so that the bench JVM's CPU time is the ingester's alone. The relay
 * answers {@code listHosts} ({@code pds-<i>.car.test}); host {@code i}, on its own port, answers
 * {@code listRepos} (its DIDs in order, cursor = the last DID) and {@code getRepo} (the stored
 * bytes). Args: the CAR directory ({@code <did with ':' as '_'>.car}), the host count. Prints
 * {@code READY <relay port> <host 0 port> ...}; exits when stdin closes.
 */
public final class CarHosts {
    private CarHosts() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int hosts = Integer.parseInt(args[1]);
        List<TreeMap<String, byte[]>> byHost = new ArrayList<>();
        for (int h = 0; h < hosts; h++) {
            byHost.add(new TreeMap<>());
        }
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.toString().endsWith(".car")).sorted().toList();
        }
        for (int i = 0; i < files.size(); i++) {
            String n = files.get(i).getFileName().toString();
            byHost.get(i % hosts).put(n.substring(0, n.length() - 4).replace('_', ':'), Files.readAllBytes(files.get(i)));
        }
        var pool = Executors.newFixedThreadPool(8);
        HttpServer relay = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
        relay.setExecutor(pool);
        relay.createContext("/xrpc/com.atproto.sync.listHosts", ex -> {
            StringBuilder b = new StringBuilder("{\"hosts\":[");
            for (int h = 0; h < hosts; h++) {
                b.append(h == 0 ? "" : ",").append("{\"hostname\":\"pds-").append(h).append(".car.test\",\"seq\":1,")
                        .append("\"accountCount\":").append(byHost.get(h).size()).append(",\"status\":\"active\"}");
            }
            send(ex, 200, "application/json", b.append("]}").toString().getBytes(StandardCharsets.UTF_8));
        });
        relay.start();
        StringBuilder ready = new StringBuilder("READY " + relay.getAddress().getPort());
        for (int h = 0; h < hosts; h++) {
            TreeMap<String, byte[]> repos = byHost.get(h);
            HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
            s.setExecutor(pool);
            s.createContext("/xrpc/com.atproto.sync.listRepos", ex -> {
                Map<String, String> q = query(ex);
                int limit = Integer.parseInt(q.getOrDefault("limit", "500"));
                String after = q.get("cursor");
                var tail = after == null ? repos : repos.tailMap(after, false);
                StringBuilder b = new StringBuilder("{\"repos\":[");
                String last = null;
                int n = 0;
                for (String did : tail.keySet()) {
                    if (n == limit) {
                        break;
                    }
                    b.append(n++ == 0 ? "" : ",").append("{\"did\":\"").append(did)
                            .append("\",\"head\":\"x\",\"rev\":\"\",\"active\":true}");
                    last = did;
                }
                b.append(']');
                if (n == limit && last != null && !last.equals(repos.lastKey())) {
                    b.append(",\"cursor\":\"").append(last).append('"');
                }
                send(ex, 200, "application/json", b.append('}').toString().getBytes(StandardCharsets.UTF_8));
            });
            s.createContext("/xrpc/com.atproto.sync.getRepo", ex -> {
                byte[] car = repos.get(query(ex).get("did"));
                if (car == null) {
                    send(ex, 400, "application/json",
                            "{\"error\":\"RepoNotFound\",\"message\":\"no such repo\"}".getBytes(StandardCharsets.UTF_8));
                } else {
                    send(ex, 200, "application/vnd.ipld.car", car);
                }
            });
            s.start();
            ready.append(' ').append(s.getAddress().getPort());
        }
        System.out.println(ready);
        System.out.flush();
        while (System.in.read() >= 0) {
            // runs until the parent closes stdin (or dies)
        }
        System.exit(0);
    }

    private static Map<String, String> query(HttpExchange ex) {
        Map<String, String> m = new HashMap<>();
        String q = ex.getRequestURI().getRawQuery();
        if (q != null) {
            for (String kv : q.split("&")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    m.put(kv.substring(0, eq), URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
        }
        return m;
    }

    private static void send(HttpExchange ex, int status, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("content-type", type);
        ex.sendResponseHeaders(status, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }
}
