package jetstream.cli.dev;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A network namespace of this JVM's, joined to the root namespace by a veth pair, for a gateway that must
 * reach the rest of the stack across a network boundary ({@link DevStackConfig.Netns}): namespace
 * {@code jsgw<pid>}, root end {@code jsgw<pid>h} at {@code 10.213.N.1/30}, inner end {@code jsgw<pid>n} at
 * {@code 10.213.N.2/30} beside the namespace's own loopback, N the first /30 from {@code pid % 256} that no
 * interface of the root namespace holds. Needs root and iproute2. Namespaces of this prefix whose JVM is gone
 * (a run killed before its cleanup) are deleted first; {@link #close()} deletes this one.
 */
final class VethNamespace implements AutoCloseable {
    private static final String PREFIX = "jsgw";
    private static final Pattern OURS = Pattern.compile(PREFIX + "(\\d+)");

    private final DevStackConfig.Netns netns;

    private VethNamespace(DevStackConfig.Netns netns) {
        this.netns = netns;
    }

    /** A new namespace and veth pair, or an IOException saying why {@code ip} could not make them (nothing left behind). */
    static VethNamespace create() throws IOException, InterruptedException {
        long pid = ProcessHandle.current().pid();
        deleteStale(pid);
        String name = PREFIX + pid;
        String hostLink = hostLink(name);
        String innerLink = name + "n";
        int n = freeSubnet(pid);
        VethNamespace ns = new VethNamespace(new DevStackConfig.Netns(name, "10.213." + n + ".1", "10.213." + n + ".2"));
        try {
            ip("netns", "add", name);
            ip("link", "add", hostLink, "type", "veth", "peer", "name", innerLink, "netns", name);
            ip("addr", "add", ns.netns.hostAddress() + "/30", "dev", hostLink);
            ip("link", "set", hostLink, "up");
            ip("-n", name, "addr", "add", ns.netns.address() + "/30", "dev", innerLink);
            ip("-n", name, "link", "set", innerLink, "up");
            // the gateway's JVM and Quarkus expect a working loopback; it is the namespace's own, not the host's
            ip("-n", name, "link", "set", "lo", "up");
        } catch (IOException | InterruptedException | RuntimeException e) {
            deleteQuietly(name);
            throw e;
        }
        return ns;
    }

    DevStackConfig.Netns netns() {
        return netns;
    }

    /** Whether a TCP connect to {@code host:port} from inside the namespace succeeds within 5 s (bash's /dev/tcp). */
    boolean canConnect(String host, int port) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("ip", "netns", "exec", netns.name(), "timeout", "5", "bash", "-c",
                "exec 3<>/dev/tcp/" + host + "/" + port).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("the connect probe to " + host + ":" + port + " did not end");
        }
        return p.exitValue() == 0;
    }

    /** Whether process {@code pid} runs in this namespace (its {@code /proc/<pid>/ns/net} is the namespace's file). */
    boolean holds(long pid) throws IOException {
        String link = Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "ns", "net")).toString();
        Object inode = Files.getAttribute(Path.of("/run/netns", netns.name()), "unix:ino");
        return link.equals("net:[" + inode + "]");
    }

    @Override
    public void close() throws IOException, InterruptedException {
        delete(netns.name());
    }

    private static String hostLink(String name) {
        return name + "h";
    }

    /** Deletes the pair (both ends go with either) and the namespace; a failure is thrown once both were tried. */
    private static void delete(String name) throws IOException, InterruptedException {
        IOException failed = null;
        try {
            ip("link", "del", hostLink(name));
        } catch (IOException e) {
            failed = e;
        }
        try {
            ip("netns", "del", name);
        } catch (IOException e) {
            if (failed != null) {
                e.addSuppressed(failed);
            }
            failed = e;
        }
        if (failed != null) {
            throw failed;
        }
    }

    private static void deleteQuietly(String name) {
        try {
            delete(name);
        } catch (IOException e) {
            // a creation that failed part way, or a stale pair gone with its namespace: what is missing is no error
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Namespaces {@code jsgw<pid>} of JVMs that no longer run, and this JVM's own from an aborted earlier test. */
    private static void deleteStale(long self) throws IOException, InterruptedException {
        for (String line : ip("netns", "list")) {
            String name = line.split(" ", 2)[0];
            Matcher m = OURS.matcher(name);
            if (!m.matches()) {
                continue;
            }
            long pid = Long.parseLong(m.group(1));
            if (pid == self || ProcessHandle.of(pid).filter(ProcessHandle::isAlive).isEmpty()) {
                deleteQuietly(name);
            }
        }
    }

    /** The first 10.213.N.0/30 from {@code pid % 256} that no interface of the root namespace has an address in. */
    private static int freeSubnet(long pid) throws IOException, InterruptedException {
        String addrs = String.join("\n", ip("-o", "-4", "addr", "show"));
        for (int i = 0; i < 256; i++) {
            int n = (int) ((pid + i) % 256);
            if (!addrs.contains(" 10.213." + n + ".")) {
                return n;
            }
        }
        throw new IOException("every 10.213.N.0/30 is taken");
    }

    /** Runs {@code ip args}; its output lines, or an IOException with them when it fails. */
    private static List<String> ip(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("ip"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(20, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + " failed: " + out.strip());
        }
        return out.lines().toList();
    }
}
