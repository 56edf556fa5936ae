package jetstream.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A relay and its PDS hosts serving prebuilt repository CARs from a directory, run as a child process of
 * {@link BootstrapHttpBench} so that the bench JVM's CPU time is the ingester's alone. The relay answers
 * {@code listHosts} ({@code pds-<i>.car.test}); host {@code i}, on its own port, answers {@code listRepos}
 * (its DIDs in order, cursor = the last DID) and {@code getRepo} (the file's bytes, read when asked, so a
 * million repositories fit: only their DIDs are held). Args: the CAR directory ({@code <did with ':' as
 * '_'>.car}), the host count. Prints {@code READY <relay port> <host 0 port> ...}; exits when stdin closes.
 *
 * <p>A plain blocking HTTP/1.1 keep-alive server, a thread per connection, each answer written in one
 * piece with {@code TCP_NODELAY}: it shares the cores with the ingester it feeds, so it should cost little
 * (the JDK's {@code HttpServer} took 3–9 µs per record) and never hold a body back for a delayed ACK.
 */
public final class CarHosts {
    private static final byte[] HEAD_END = {'\r', '\n', '\r', '\n'};
    private static final int MAX_HEAD = 16 << 10;

    private CarHosts() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int hosts = Integer.parseInt(args[1]);
        List<String> dids;
        try (Stream<Path> s = Files.list(dir)) {
            dids = s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".car")).sorted()
                    .map(n -> n.substring(0, n.length() - 4).replace('_', ':')).toList();
        }
        List<List<String>> byHost = new ArrayList<>();
        for (int h = 0; h < hosts; h++) {
            byHost.add(new ArrayList<>());
        }
        for (int i = 0; i < dids.size(); i++) {
            byHost.get(i % hosts).add(dids.get(i));
        }
        StringBuilder list = new StringBuilder("{\"hosts\":[");
        for (int h = 0; h < hosts; h++) {
            list.append(h == 0 ? "" : ",").append("{\"hostname\":\"pds-").append(h).append(".car.test\",\"seq\":1,")
                    .append("\"accountCount\":").append(byHost.get(h).size()).append(",\"status\":\"active\"}");
        }
        byte[] hostList = list.append("]}").toString().getBytes(StandardCharsets.UTF_8);
        StringBuilder ready = new StringBuilder("READY " + serve(target -> target.startsWith(
                "/xrpc/com.atproto.sync.listHosts") ? new Answer(200, "application/json", hostList) : null));
        for (int h = 0; h < hosts; h++) {
            String[] repos = byHost.get(h).toArray(String[]::new);
            Arrays.sort(repos);
            ready.append(' ').append(serve(target -> answer(dir, repos, target)));
        }
        System.out.println(ready);
        System.out.flush();
        while (System.in.read() >= 0) {
            // runs until the parent closes stdin (or dies)
        }
        System.exit(0);
    }

    private record Answer(int status, String type, byte[] body) {}

    private interface Route {
        /** The answer to a GET of {@code target}; null for 404. */
        Answer answer(String target) throws IOException;
    }

    private static Answer answer(Path dir, String[] repos, String target) throws IOException {
        Map<String, String> q = query(target);
        if (target.startsWith("/xrpc/com.atproto.sync.listRepos?") || target.equals("/xrpc/com.atproto.sync.listRepos")) {
            int limit = Integer.parseInt(q.getOrDefault("limit", "500"));
            String after = q.get("cursor");
            int from = 0;
            if (after != null) {
                int at = Arrays.binarySearch(repos, after);
                from = at >= 0 ? at + 1 : -at - 1;
            }
            int to = Math.min(repos.length, from + limit);
            StringBuilder b = new StringBuilder("{\"repos\":[");
            for (int i = from; i < to; i++) {
                b.append(i == from ? "" : ",").append("{\"did\":\"").append(repos[i])
                        .append("\",\"head\":\"x\",\"rev\":\"\",\"active\":true}");
            }
            b.append(']');
            if (to - from == limit && to < repos.length) {
                b.append(",\"cursor\":\"").append(repos[to - 1]).append('"');
            }
            return new Answer(200, "application/json", b.append('}').toString().getBytes(StandardCharsets.UTF_8));
        }
        if (target.startsWith("/xrpc/com.atproto.sync.getRepo?")) {
            String did = q.get("did");
            if (did != null && Arrays.binarySearch(repos, did) >= 0) {
                try {
                    return new Answer(200, "application/vnd.ipld.car", Files.readAllBytes(dir.resolve(did.replace(':', '_') + ".car")));
                } catch (NoSuchFileException e) {
                    // answered as not found below
                }
            }
            return new Answer(400, "application/json",
                    "{\"error\":\"RepoNotFound\",\"message\":\"no such repo\"}".getBytes(StandardCharsets.UTF_8));
        }
        return null;
    }

    /** Listens on a loopback port for {@code route}; returns the port. */
    private static int serve(Route route) throws IOException {
        ServerSocket ss = new ServerSocket(0, 256, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            while (true) {
                try {
                    Socket s = ss.accept();
                    Thread c = new Thread(() -> connection(s, route), "car-hosts-conn");
                    c.setDaemon(true);
                    c.start();
                } catch (IOException e) {
                    return;
                }
            }
        }, "car-hosts-accept");
        t.setDaemon(true);
        t.start();
        return ss.getLocalPort();
    }

    private static void connection(Socket s, Route route) {
        try (s) {
            s.setTcpNoDelay(true);
            InputStream in = new BufferedInputStream(s.getInputStream(), 8192);
            OutputStream out = s.getOutputStream();
            for (String line; (line = head(in)) != null; ) {
                String[] parts = line.split(" ");
                Answer a = parts.length == 3 && parts[0].equals("GET") ? route.answer(parts[1]) : null;
                if (a == null) {
                    a = new Answer(404, "text/plain", "not found".getBytes(StandardCharsets.UTF_8));
                }
                byte[] h = ("HTTP/1.1 " + a.status() + (a.status() == 200 ? " OK" : " Error") + "\r\nContent-Type: "
                        + a.type() + "\r\nContent-Length: " + a.body().length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
                byte[] whole = Arrays.copyOf(h, h.length + a.body().length);
                System.arraycopy(a.body(), 0, whole, h.length, a.body().length);
                out.write(whole);
                out.flush();
            }
        } catch (IOException e) {
            // the client went away: its connection ends here
        }
    }

    /** The next request's line (its headers read and dropped; requests carry no body); null at end of stream. */
    private static String head(InputStream in) throws IOException {
        byte[] buf = new byte[MAX_HEAD];
        int n = 0;
        int matched = 0;
        for (int c; matched < HEAD_END.length; ) {
            if ((c = in.read()) < 0) {
                return null;
            }
            if (n == buf.length) {
                throw new IOException("request head over " + MAX_HEAD + " bytes");
            }
            buf[n++] = (byte) c;
            matched = c == HEAD_END[matched] ? matched + 1 : c == '\r' ? 1 : 0;
        }
        String text = new String(buf, 0, n, StandardCharsets.ISO_8859_1);
        return text.substring(0, text.indexOf("\r\n"));
    }

    private static Map<String, String> query(String target) {
        Map<String, String> m = new HashMap<>();
        int at = target.indexOf('?');
        if (at >= 0) {
            for (String kv : target.substring(at + 1).split("&")) {
                int eq = kv.indexOf('=');
                if (eq > 0) {
                    m.put(kv.substring(0, eq), URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
        }
        return m;
    }
}
