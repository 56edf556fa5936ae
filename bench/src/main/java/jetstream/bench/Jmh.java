package jetstream.bench;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import jetstream.testing.ResultLine;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.NoBenchmarksException;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;

/**
 * What {@code bench/run} starts instead of {@code org.openjdk.jmh.Main}: JMH with the same command line
 * (listing and help go to JMH's own main), then one {@link ResultLine} per measured benchmark, its primary
 * score against its floor from the same run. Floors are the methods a {@link Floor} names and every
 * {@code floor*} method; they get no line of their own. A benchmark without {@link Floor} pairs with its
 * class's only floor when the class has exactly one, else it prints {@code floor=none}; a floor that did not
 * run (excluded by the command line) also leaves {@code floor=none}.
 * Metric (unless {@link Floor#metric} names it): class name without {@code Bench}, method, each parameter's
 * name and value, then the score unit ({@code ops/s} → {@code _ops_per_s}: higher is better;
 * {@code ns/op} → {@code _ns_per_op}: lower is better), all snake_case, plus {@code _vs_<floor>} when a
 * benchmark has several floors; e.g. {@code cbor_cbor_to_json_ns_per_op}.
 */
public final class Jmh {
    /** One benchmark's primary score; {@code benchmark} is the class's binary name, a dot, the method. */
    record Score(String benchmark, String mode, Map<String, String> params, double value, String unit) {
        String className() {
            return benchmark.substring(0, benchmark.lastIndexOf('.'));
        }

        String method() {
            return benchmark.substring(benchmark.lastIndexOf('.') + 1);
        }
    }

    /** One benchmark's pairing: the floor method, and the metric name ({@code ""}: derived). */
    private record Pairing(String floor, String metric) {}

    private Jmh() {}

    public static void main(String[] args) throws Exception {
        CommandLineOptions cli;
        try {
            cli = new CommandLineOptions(args);
        } catch (CommandLineOptionException e) {
            org.openjdk.jmh.Main.main(args);
            return;
        }
        if (cli.shouldHelp() || cli.shouldList() || cli.shouldListWithParams() || cli.shouldListProfilers()
                || cli.shouldListResultFormats()) {
            org.openjdk.jmh.Main.main(args);
            return;
        }
        List<Score> scores = new ArrayList<>();
        try {
            for (RunResult r : new Runner(cli).run()) {
                Map<String, String> params = new TreeMap<>();
                r.getParams().getParamsKeys().forEach(k -> params.put(k, r.getParams().getParam(k)));
                scores.add(new Score(r.getParams().getBenchmark(), r.getParams().getMode().shortLabel(), params,
                        r.getPrimaryResult().getScore(), r.getPrimaryResult().getScoreUnit()));
            }
        } catch (NoBenchmarksException e) {
            System.err.println("No matching benchmarks: " + String.join(" ", args));
            System.exit(1);
        }
        lines(scores).forEach(System.out::println);
    }

    /** The RESULT lines of {@code scores}, in their order. */
    static List<String> lines(List<Score> scores) {
        List<String> out = new ArrayList<>();
        for (Score s : scores) {
            Class<?> c = load(s.className());
            if (floorMethods(c).contains(s.method())) {
                continue;
            }
            List<Pairing> floors = floorsOf(c, s.method());
            if (floors.isEmpty()) {
                out.add(ResultLine.formatNoFloor(metric(s, null), s.value()));
                continue;
            }
            for (Pairing f : floors) {
                String name = !f.metric().isEmpty() ? f.metric() : metric(s, floors.size() > 1 ? f.floor() : null);
                Score floor = scores.stream().filter(x -> x.className().equals(s.className())
                        && x.method().equals(f.floor()) && x.mode().equals(s.mode()) && sameParams(x, s)).findFirst().orElse(null);
                out.add(floor == null ? ResultLine.formatNoFloor(name, s.value()) : ResultLine.format(name, s.value(), floor.value()));
            }
        }
        return out;
    }

    /** The floors {@code method} is reported against: its {@link Floor}s, else the class's only floor. */
    private static List<Pairing> floorsOf(Class<?> c, String method) {
        if (c == null) {
            return List.of();
        }
        for (Method m : c.getMethods()) {
            Floor[] declared = m.getAnnotationsByType(Floor.class);
            if (m.getName().equals(method) && declared.length > 0) {
                return Arrays.stream(declared).map(f -> new Pairing(f.value(), f.metric())).toList();
            }
        }
        Set<String> floors = floorMethods(c);
        return floors.size() == 1 ? List.of(new Pairing(floors.iterator().next(), "")) : List.of();
    }

    /** Every method that is some benchmark's floor: named by a {@link Floor}, or named {@code floor*}. */
    private static Set<String> floorMethods(Class<?> c) {
        Set<String> out = new TreeSet<>();
        if (c != null) {
            for (Method m : c.getMethods()) {
                if (m.getName().startsWith("floor")) {
                    out.add(m.getName());
                }
                for (Floor f : m.getAnnotationsByType(Floor.class)) {
                    out.add(f.value());
                }
            }
        }
        return out;
    }

    private static String metric(Score s, String versus) {
        String cls = s.className().substring(s.className().lastIndexOf('.') + 1);
        cls = cls.substring(cls.lastIndexOf('$') + 1).replaceFirst("Bench$", "");
        StringBuilder b = new StringBuilder(ResultLine.snake(cls)).append('_').append(ResultLine.snake(s.method()));
        s.params().forEach((k, v) -> b.append('_').append(ResultLine.snake(k)).append('_').append(ResultLine.snake(v)));
        b.append('_').append(ResultLine.snake(s.unit().replace("/", "_per_")));
        if (versus != null) {
            b.append("_vs_").append(ResultLine.snake(versus));
        }
        return b.toString();
    }

    private static boolean sameParams(Score a, Score b) {
        return a.params().entrySet().stream().allMatch(e -> !b.params().containsKey(e.getKey())
                || b.params().get(e.getKey()).equals(e.getValue()));
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name, false, Jmh.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            return null;
        }
    }
}
